//! A ROS 2 node over r2r (rcl, the site's RMW: rmw_fastrtps_cpp by default): typed publishers and
//! subscriptions of `acres_msgs` messages, the handle the `/acres/skill` server and clients are
//! made on, and the node's clock (`use_sim_time` with `/clock`) — the API of the ros2-client
//! backend's `node` module.
//!
//! The bytes are acres_msgs' own CDR (the one encoder of the project), handed to rcl as
//! serialized messages (`publish_raw`, `subscribe_raw`); r2r's generated types serve only as type
//! supports. A thread of the node spins rcl (`spin_once`) and moves each sample into its
//! subscription's queue (KeepLast of the QoS depth). Names are resolved here, from [`RosArgs`] (namespace, `-r` remaps), as
//! on the other backend, and given to rcl fully qualified; the node's name and namespace are
//! [`RosArgs`]'. (rcl also reads the process's `--ros-args`, as r2r passes them to `rcl_init`:
//! its remaps of names already qualified and remapped here change nothing.)
//!
//! NETWORK SAFETY: a node is an rcl participant; run it with `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`
//! inside `unshare -n`, as the tests do.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;
use std::time::Duration;

use acres_msgs::rosgraph_msgs::Clock;
use acres_msgs::Message;
use futures::Stream;
use tracing::{debug, info, warn};

use crate::args::RosArgs;
use crate::env::{DiscoveryRange, RosEnv};
use crate::qos::QosProfile;

pub use crate::common::{stamp, wall_s, Framing, NodeError};

/// How long one `spin_once` of the spinner thread waits for work (it returns at once when
/// something arrives; the lock on the node is free between spins).
const SPIN: Duration = Duration::from_millis(5);

pub(crate) fn rcl<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> NodeError + '_ {
    move |e| NodeError::Dds(format!("rcl: {what}: {e}"))
}

/// A typed publisher of an `acres_msgs` message (`None`: the ROS installation has no type support
/// of the message, see [`RosNode::publisher`]).
pub struct Pub<M: Message + 'static>(Option<r2r::PublisherUntyped>, PhantomData<fn(M)>);

impl<M: Message + 'static> Pub<M> {
    /// Publishes one message; a failed write is logged (a best-effort topic drops it).
    pub fn publish(&self, m: M) {
        let Some(p) = &self.0 else { return };
        if let Err(e) = p.publish_raw(&m.encode()) {
            debug!(topic = M::ROS_NAME, error = %e, "publish failed");
        }
    }
}

type Samples = Box<dyn Stream<Item = Vec<u8>> + Send + Unpin>;

/// What a subscription received: r2r's channel, drained by the spinner thread into a queue that
/// keeps the newest `depth` samples (the QoS history, KeepLast as on DDS: r2r's own channel
/// would keep the oldest ten and drop the newer ones), and the waker of a watching [`crate::Waiter`].
struct Inbox {
    samples: Samples,
    queue: VecDeque<Vec<u8>>,
    depth: usize,
    waker: Waker,
}

impl Inbox {
    /// Moves what arrived into the queue; wakes the waiter when something did.
    fn drain(&mut self) {
        let mut cx = Context::from_waker(Waker::noop());
        let mut any = false;
        while let Poll::Ready(Some(bytes)) = Pin::new(&mut self.samples).poll_next(&mut cx) {
            self.queue.push_back(bytes);
            if self.queue.len() > self.depth {
                self.queue.pop_front();
            }
            any = true;
        }
        if any {
            self.waker.wake_by_ref();
        }
    }
}

type Inboxes = Arc<Mutex<Vec<Weak<Mutex<Inbox>>>>>;

/// A typed subscription of an `acres_msgs` message.
pub struct Sub<M: Message + 'static> {
    inbox: Arc<Mutex<Inbox>>,
    _m: PhantomData<fn() -> M>,
}

impl<M: Message + 'static> Sub<M> {
    /// The next message received, if any (never blocks); undecodable samples are skipped.
    pub fn take(&self) -> Option<M> {
        let mut inbox = self.inbox.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(bytes) = inbox.queue.pop_front() {
            match M::decode(&bytes) {
                Ok(m) => return Some(m),
                Err(e) => debug!(topic = M::ROS_NAME, error = %e, "sample skipped"),
            }
        }
        None
    }

    /// The newest message received since the last call, dropping older ones.
    pub fn latest(&self) -> Option<M> {
        let mut last = None;
        while let Some(m) = self.take() {
            last = Some(m);
        }
        last
    }

    /// The waker of a [`crate::Waiter`] watching this subscription.
    pub(crate) fn set_waker(&mut self, w: Waker) {
        self.inbox.lock().unwrap_or_else(PoisonError::into_inner).waker = w;
    }
}

/// A ROS 2 node.
pub struct RosNode {
    node: Arc<Mutex<r2r::Node>>,
    /// The node's arguments (name, namespace, parameters).
    pub args: RosArgs,
    /// The request/reply framing parameter `rmw_framing` (read and checked as on the other
    /// backend; here the RMW frames requests itself).
    pub framing: Framing,
    clock: Option<(Sub<Clock>, Mutex<f64>)>,
    inboxes: Inboxes,
    stop: Arc<AtomicBool>,
    spinner: Option<JoinHandle<()>>,
}

/// The domain of this process's rcl context (r2r makes one context per process).
static CONTEXT_DOMAIN: std::sync::OnceLock<u16> = std::sync::OnceLock::new();

/// Makes rcl see `env` (rcl reads the domain and the discovery range from the environment).
fn apply_env(env: &RosEnv) {
    let set = |k: &str, v: &str| {
        if std::env::var(k).ok().as_deref() != Some(v) {
            std::env::set_var(k, v);
        }
    };
    set("ROS_DOMAIN_ID", &env.domain_id.to_string());
    let range = match env.range {
        DiscoveryRange::Localhost => "LOCALHOST",
        DiscoveryRange::Subnet => "SUBNET",
        DiscoveryRange::Off => "OFF",
    };
    set("ROS_AUTOMATIC_DISCOVERY_RANGE", range);
}

impl RosNode {
    /// Makes the node named by `args` in the environment `env`; spins rcl on a thread of its own.
    pub fn new(args: RosArgs, env: RosEnv) -> Result<RosNode, NodeError> {
        let framing = Framing::parse(&args.str_or("rmw_framing", "fastrtps")?)?;
        let use_sim_time = args.bool_or("use_sim_time", false)?;
        // r2r has one rcl context per process, and rcl fixes its domain when it is made: a node
        // in another domain would silently see nobody. Refuse it instead.
        let first = *CONTEXT_DOMAIN.get_or_init(|| env.domain_id);
        if first != env.domain_id {
            return Err(NodeError::Dds(format!(
                "r2r: this process's ROS context is on domain {first}; a node on domain {} needs a \
                 process of its own (rcl fixes the domain per context)",
                env.domain_id
            )));
        }
        apply_env(&env);
        let ctx = r2r::Context::create().map_err(rcl("context"))?;
        let node = r2r::Node::create(ctx, &args.node_name, &args.namespace)
            .map_err(|e| NodeError::Name { name: args.node_name.clone(), reason: e.to_string() })?;
        let node = Arc::new(Mutex::new(node));
        let stop = Arc::new(AtomicBool::new(false));
        let inboxes: Inboxes = Arc::default();
        let (n, s, boxes) = (node.clone(), stop.clone(), inboxes.clone());
        let handle = std::thread::Builder::new()
            .name("ros-spinner".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    n.lock().unwrap_or_else(PoisonError::into_inner).spin_once(SPIN);
                    let mut boxes = boxes.lock().unwrap_or_else(PoisonError::into_inner);
                    boxes.retain(|b| match b.upgrade() {
                        Some(b) => {
                            b.lock().unwrap_or_else(PoisonError::into_inner).drain();
                            true
                        }
                        None => false,
                    });
                }
            })
            .map_err(rcl("spinner thread"))?;
        info!(
            node = %args.node_name, ns = %args.namespace, domain = env.domain_id,
            loopback_only = env.loopback_only(), ?framing, use_sim_time, backend = "r2r", "node up"
        );
        let mut n = RosNode { node, args, framing, clock: None, inboxes, stop, spinner: Some(handle) };
        if use_sim_time {
            let sub = n.subscription::<Clock>("/clock", crate::qos::clock())?;
            n.clock = Some((sub, Mutex::new(0.0)));
        }
        Ok(n)
    }

    /// The fully qualified name of `topic` ([`crate::common::resolve`]).
    pub(crate) fn name(&self, topic: &str) -> String {
        crate::common::resolve(&self.args, topic)
    }

    /// The rcl node (locked: the spinner waits meanwhile).
    pub(crate) fn rcl(&self) -> MutexGuard<'_, r2r::Node> {
        self.node.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A publisher of `M` on `topic` (remapped; relative names are in the node's namespace).
    /// When the ROS installation has no type support of `M` (the PyPI Jazzy has no `tf2_msgs`),
    /// the publisher publishes nothing and a warning says so: the node runs without that topic.
    pub fn publisher<M: Message + 'static>(
        &mut self,
        topic: &str,
        qos: QosProfile,
    ) -> Result<Pub<M>, NodeError> {
        let name = self.name(topic);
        match self.rcl().create_publisher_untyped(&name, M::ROS_NAME, qos) {
            Ok(p) => Ok(Pub(Some(p), PhantomData)),
            Err(r2r::Error::InvalidMessageType { msgtype }) => {
                warn!(topic = %name, %msgtype, "no type support of this message here: not published");
                Ok(Pub(None, PhantomData))
            }
            Err(e) => Err(rcl(&name)(e)),
        }
    }

    /// A subscription of `M` on `topic`.
    pub fn subscription<M: Message + 'static>(
        &mut self,
        topic: &str,
        qos: QosProfile,
    ) -> Result<Sub<M>, NodeError> {
        let name = self.name(topic);
        let depth = qos.depth.max(1);
        let s = self.rcl().subscribe_raw(&name, M::ROS_NAME, qos).map_err(rcl(&name))?;
        let inbox =
            Inbox { samples: Box::new(s), queue: VecDeque::new(), depth, waker: Waker::noop().clone() };
        let inbox = Arc::new(Mutex::new(inbox));
        self.inboxes.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::downgrade(&inbox));
        Ok(Sub { inbox, _m: PhantomData })
    }

    /// The node's time, s: the newest `/clock` with `use_sim_time`, else the system clock.
    pub fn now_s(&self) -> f64 {
        match &self.clock {
            Some((sub, t)) => {
                let mut t = t.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(c) = sub.latest() {
                    *t = f64::from(c.clock.sec) + f64::from(c.clock.nanosec) * 1e-9;
                }
                *t
            }
            None => wall_s(),
        }
    }

    /// True when the node's clock is the simulator's `/clock`.
    pub fn sim_time(&self) -> bool {
        self.clock.is_some()
    }
}

impl Drop for RosNode {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.spinner.take() {
            let _ = h.join();
        }
    }
}

/// Polls `fut` (resolved by the spinner thread) until it is ready or `timeout` passes.
pub(crate) fn wait_on<F: std::future::Future + Unpin>(mut fut: F, timeout: Duration) -> Option<F::Output> {
    let deadline = std::time::Instant::now() + timeout;
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    loop {
        if let Poll::Ready(v) = Pin::new(&mut fut).poll(&mut cx) {
            return Some(v);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Polls `fut` once: its output when it is ready.
pub(crate) fn ready<F: std::future::Future + Unpin>(fut: &mut F) -> Option<F::Output> {
    match Pin::new(fut).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}
