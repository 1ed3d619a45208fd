//! The r2r backend of `acres_ros` (issue 19): acres_msgs messages over a real ROS 2 client
//! library (rcl, rmw_fastrtps_cpp), built with a sourced ROS 2 (`tools/ros_env.sh`).
//!
//! **A working subset**, not yet the whole `acres_ros` interface: a node ([`R2rNode`]) with typed
//! publishers ([`R2rPub`]) and subscriptions ([`R2rSub`]) of any `acres_msgs` message, under
//! rclcpp's QoS profiles ([`Qos`]), spun by its owner. The bytes are acres_msgs' own CDR (one
//! encoder in the project, `acres_msgs::cdr`), handed to rcl as serialized messages
//! (`publish_raw`, `subscribe_raw`); r2r's generated types are used only for their type support.
//! Not here yet: the `/acres/skill` action server and a client of acres_msgs types (the tests
//! drive the vehicle node's action with r2r's own generated types, through [`R2rNode::r2r`]),
//! `--ros-args` parameters through `acres_ros::RosArgs` (rcl applies the process's remaps
//! itself), and the nodes built on this backend.
//!
//! NETWORK SAFETY: a node here is an rcl participant; run it only as the tests do, with
//! `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` inside `unshare -n`.

use std::marker::PhantomData;
use std::time::Duration;

use acres_msgs::Message;
use futures::{FutureExt, Stream, StreamExt};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum R2rError {
    /// r2r (rcl) refused.
    #[error("r2r: {what}: {source}")]
    R2r {
        /// What was being done.
        what: String,
        /// r2r's error.
        source: r2r::Error,
    },
}

fn r2r_err(what: impl Into<String>) -> impl FnOnce(r2r::Error) -> R2rError {
    let what = what.into();
    move |source| R2rError::R2r { what, source }
}

/// rclcpp's QoS profiles, as `acres_ros::qos` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qos {
    /// Reliable, volatile, KeepLast(10).
    Default,
    /// Best effort, volatile, KeepLast(5).
    SensorData,
    /// `/clock`: best effort, KeepLast(1).
    Clock,
}

impl Qos {
    fn profile(self) -> r2r::QosProfile {
        match self {
            Qos::Default => r2r::QosProfile::default().reliable().volatile().keep_last(10),
            Qos::SensorData => r2r::QosProfile::sensor_data().best_effort().volatile().keep_last(5),
            Qos::Clock => r2r::QosProfile::sensor_data().best_effort().volatile().keep_last(1),
        }
    }
}

/// The ROS name of a message (`nav_msgs/msg/Odometry`), as rcl's type support lookup takes it.
fn ros_type<M: Message>() -> &'static str {
    M::ROS_NAME
}

/// An rcl node.
pub struct R2rNode {
    node: r2r::Node,
}

impl R2rNode {
    /// A node `name` in `namespace` (`""` or `/ns`); the process's ROS arguments apply as rcl
    /// reads them.
    pub fn new(name: &str, namespace: &str) -> Result<R2rNode, R2rError> {
        let ctx = r2r::Context::create().map_err(r2r_err("context"))?;
        let node = r2r::Node::create(ctx, name, namespace).map_err(r2r_err(format!("node {name}")))?;
        Ok(R2rNode { node })
    }

    /// A publisher of `M` on `topic`.
    pub fn publisher<M: Message>(&mut self, topic: &str, qos: Qos) -> Result<R2rPub<M>, R2rError> {
        let p = self
            .node
            .create_publisher_untyped(topic, ros_type::<M>(), qos.profile())
            .map_err(r2r_err(format!("publisher {topic}")))?;
        Ok(R2rPub { p, buf: Vec::new(), _m: PhantomData })
    }

    /// A subscription of `M` on `topic`.
    pub fn subscription<M: Message>(&mut self, topic: &str, qos: Qos) -> Result<R2rSub<M>, R2rError> {
        let s = self
            .node
            .subscribe_raw(topic, ros_type::<M>(), qos.profile())
            .map_err(r2r_err(format!("subscription {topic}")))?;
        Ok(R2rSub { s: Box::new(s), errors: 0, _m: PhantomData })
    }

    /// Lets rcl take what arrived (waits up to `timeout` for something).
    pub fn spin_once(&mut self, timeout: Duration) {
        self.node.spin_once(timeout);
    }

    /// Makes the node's ROS clock follow `/clock` (`use_sim_time`; r2r's time source).
    pub fn use_sim_time(&mut self) -> Result<(), R2rError> {
        let ts = self.node.get_time_source();
        ts.enable_sim_time(&mut self.node).map_err(r2r_err("use_sim_time"))
    }

    /// The node's ROS time, s: the newest `/clock` after [`R2rNode::use_sim_time`], else the
    /// system clock.
    pub fn now_s(&mut self) -> Result<f64, R2rError> {
        let clock = self.node.get_ros_clock();
        let mut clock = clock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(clock.get_now().map_err(r2r_err("the ROS clock"))?.as_secs_f64())
    }

    /// The r2r node itself, for what this crate does not wrap yet (the `/acres/skill` action
    /// client with r2r's generated `acres_interfaces` types, in the tests).
    pub fn r2r(&mut self) -> &mut r2r::Node {
        &mut self.node
    }
}

/// A typed publisher: acres_msgs' CDR, published as a serialized message.
pub struct R2rPub<M> {
    p: r2r::PublisherUntyped,
    buf: Vec<u8>,
    _m: PhantomData<fn(M)>,
}

impl<M: Message> R2rPub<M> {
    /// Publishes `m`.
    pub fn publish(&mut self, m: &M) -> Result<(), R2rError> {
        m.encode_into(&mut self.buf);
        self.p.publish_raw(&self.buf).map_err(r2r_err(format!("publish {}", M::ROS_NAME)))
    }
}

/// A typed subscription: serialized messages from rcl, decoded by acres_msgs.
pub struct R2rSub<M> {
    s: Box<dyn Stream<Item = Vec<u8>> + Unpin>,
    errors: u64,
    _m: PhantomData<fn() -> M>,
}

impl<M: Message> R2rSub<M> {
    /// The oldest message that arrived and was not taken yet (after [`R2rNode::spin_once`]);
    /// bytes that do not decode are counted ([`R2rSub::decode_errors`]) and skipped.
    pub fn take(&mut self) -> Option<M> {
        while let Some(Some(bytes)) = self.s.next().now_or_never() {
            match M::decode(&bytes) {
                Ok(m) => return Some(m),
                Err(_) => self.errors += 1,
            }
        }
        None
    }

    /// The newest message that arrived, dropping older ones.
    pub fn latest(&mut self) -> Option<M> {
        let mut last = None;
        while let Some(m) = self.take() {
            last = Some(m);
        }
        last
    }

    /// Messages whose bytes did not decode as `M`.
    pub fn decode_errors(&self) -> u64 {
        self.errors
    }
}
