//! A ROS 2 node over ros2-client: its context (the DDS participant of [`RosEnv`]), typed
//! publishers and subscriptions of `acres_msgs` messages, the action `/acres/skill`, the
//! request/reply framing, and the node's clock (`use_sim_time` with `/clock`).

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use acres_msgs::rosgraph_msgs::Clock;
use acres_msgs::Message;
use ros2_client::action::{ActionClient, ActionServer};
use ros2_client::{
    Context, Name, NodeName, NodeOptions, Publisher, QosProfile, ServiceMapping, Subscription,
};
use tracing::{debug, info};

use crate::args::RosArgs;
use crate::env::RosEnv;
use crate::skill_action::{Feedback, Goal, SkillResult};
use crate::wire::{type_name, Wire};

/// The action server of `/acres/skill`.
pub type SkillServer = ActionServer<Goal, SkillResult, Feedback>;
/// An action client of `/acres/skill`.
pub type SkillClient = ActionClient<Goal, SkillResult, Feedback>;

pub use crate::common::{stamp, wall_s, Framing, NodeError};

fn dds<E: std::fmt::Debug>(e: E) -> NodeError {
    NodeError::Dds(format!("{e:?}"))
}

/// ros2-client's service mapping of a framing.
fn mapping(f: Framing) -> ServiceMapping {
    match f {
        Framing::FastRtps => ServiceMapping::Enhanced,
        Framing::CycloneDds => ServiceMapping::Cyclone,
    }
}

/// A typed publisher of an `acres_msgs` message.
pub struct Pub<M: Message + 'static>(Publisher<Wire<M>>);

impl<M: Message + 'static> Pub<M> {
    /// Publishes one message; a failed write is logged (a best-effort topic drops it).
    pub fn publish(&self, m: M) {
        if let Err(e) = self.0.publish(Wire(m)) {
            debug!(topic = M::ROS_NAME, error = %e, "publish failed");
        }
    }
}

/// A typed subscription of an `acres_msgs` message.
pub struct Sub<M: Message + 'static>(pub(crate) Subscription<Wire<M>>);

impl<M: Message + 'static> Sub<M> {
    /// The next message received, if any (never blocks); undecodable samples are skipped.
    pub fn take(&self) -> Option<M> {
        loop {
            match self.0.take() {
                Ok(Some((Wire(m), _))) => return Some(m),
                Ok(None) => return None,
                Err(e) => debug!(topic = M::ROS_NAME, error = ?e, "sample skipped"),
            }
        }
    }

    /// The newest message received since the last call, dropping older ones.
    pub fn latest(&self) -> Option<M> {
        let mut last = None;
        while let Some(m) = self.take() {
            last = Some(m);
        }
        last
    }
}

/// A ROS 2 node.
pub struct RosNode {
    node: ros2_client::Node,
    /// The node's arguments (name, namespace, parameters).
    pub args: RosArgs,
    /// The request/reply framing (parameter `rmw_framing`, default `fastrtps`).
    pub framing: Framing,
    clock: Option<(Sub<Clock>, Arc<Mutex<f64>>)>,
    spinner: Option<JoinHandle<()>>,
}

impl RosNode {
    /// Makes the node named by `args` in the environment `env`; spins its discovery task on a
    /// thread of its own.
    pub fn new(args: RosArgs, env: RosEnv) -> Result<RosNode, NodeError> {
        let framing = Framing::parse(&args.str_or("rmw_framing", "fastrtps")?)?;
        let use_sim_time = args.bool_or("use_sim_time", false)?;
        let participant = env.participant().map_err(dds)?;
        let context = Context::from_domain_participant(participant).map_err(dds)?;
        let name = NodeName::new(&args.namespace, &args.node_name)
            .map_err(|e| NodeError::Name { name: args.node_name.clone(), reason: format!("{e:?}") })?;
        let mut node = context.new_node(name, NodeOptions::new().enable_rosout(true)).map_err(dds)?;
        let spinner = node.spinner().map_err(dds)?;
        let handle = std::thread::Builder::new()
            .name("ros-spinner".into())
            .spawn(move || {
                if let Err(e) = smol::block_on(spinner.spin()) {
                    debug!(error = ?e, "spinner ended");
                }
            })
            .map_err(dds)?;
        info!(
            node = %args.node_name, ns = %args.namespace, domain = env.domain_id,
            loopback_only = env.loopback_only(), ?framing, use_sim_time, "node up"
        );
        let mut n = RosNode { node, args, framing, clock: None, spinner: Some(handle) };
        if use_sim_time {
            let sub = n.subscription::<Clock>("/clock", crate::qos::clock())?;
            n.clock = Some((sub, Arc::new(Mutex::new(0.0))));
        }
        Ok(n)
    }

    /// The fully qualified name of `topic` ([`crate::common::resolve`]).
    fn name(&self, topic: &str) -> Result<Name, NodeError> {
        let full = crate::common::resolve(&self.args, topic);
        Name::parse(&full).map_err(|e| NodeError::Name { name: full.clone(), reason: format!("{e:?}") })
    }

    /// A publisher of `M` on `topic` (remapped; relative names are in the node's namespace).
    pub fn publisher<M: Message + 'static>(
        &mut self,
        topic: &str,
        qos: QosProfile,
    ) -> Result<Pub<M>, NodeError> {
        let t = self.node.create_topic(&self.name(topic)?, type_name::<M>(), &qos).map_err(dds)?;
        Ok(Pub(self.node.create_publisher(&t, Some(qos)).map_err(dds)?))
    }

    /// A subscription of `M` on `topic`.
    pub fn subscription<M: Message + 'static>(
        &mut self,
        topic: &str,
        qos: QosProfile,
    ) -> Result<Sub<M>, NodeError> {
        let t = self.node.create_topic(&self.name(topic)?, type_name::<M>(), &qos).map_err(dds)?;
        Ok(Sub(self.node.create_subscription(&t, Some(qos)).map_err(dds)?))
    }

    /// The server of the action `Skill` at `name`, with this node's framing.
    pub fn skill_server(&mut self, name: &str) -> Result<SkillServer, NodeError> {
        let n = self.name(name)?;
        self.node
            .create_action_server(
                mapping(self.framing),
                &n,
                &crate::skill_action::type_name(),
                crate::qos::action_server(),
            )
            .map_err(dds)
    }

    /// A client of the action `Skill` at `name`, with this node's framing.
    pub fn skill_client(&mut self, name: &str) -> Result<SkillClient, NodeError> {
        let n = self.name(name)?;
        self.node
            .create_action_client(
                mapping(self.framing),
                &n,
                &crate::skill_action::type_name(),
                crate::qos::action_client(),
            )
            .map_err(dds)
    }

    /// The node's time, s: the newest `/clock` with `use_sim_time`, else the system clock.
    pub fn now_s(&self) -> f64 {
        match &self.clock {
            Some((sub, t)) => {
                let mut t = t.lock().expect("clock lock");
                if let Some(c) = sub.latest() {
                    *t = f64::from(c.clock.sec) + f64::from(c.clock.nanosec) * 1e-9;
                }
                *t
            }
            None => wall_s(),
        }
    }

    /// Waits until a service client is matched with a server (discovery), up to `timeout`.
    pub fn wait_for_service<Q, A>(
        &self,
        client: &ros2_client::Client<Q, A>,
        timeout: std::time::Duration,
    ) -> bool
    where
        Q: ros2_client::Message + 'static,
        A: ros2_client::Message + 'static,
    {
        let found = async {
            client.wait_for_service(&self.node).await;
            true
        };
        let late = async {
            smol::Timer::after(timeout).await;
            false
        };
        smol::block_on(smol::future::or(found, late))
    }

    /// True when the node's clock is the simulator's `/clock`.
    pub fn sim_time(&self) -> bool {
        self.clock.is_some()
    }
}

impl Drop for RosNode {
    fn drop(&mut self) {
        // The spinner ends when the node goes; it is detached so that a stuck DDS thread cannot
        // hold up the process's exit.
        self.spinner.take();
    }
}
