//! acres' ROS 2 layer: the one crate that knows the ROS client library — the pure-Rust
//! `ros2-client` (RustDDS) by default, or rcl through `r2r` with the feature `r2r` (chosen at
//! build time; the same API, see `docs/ros.md`).
//!
//! Layout:
//! - [`action`]: the `/acres/skill` server (goal bookkeeping) and a polled client;
//! - [`cloud`]: `PointCloud2` of LiDAR sweeps and back;
//! - [`args`]: `--ros-args` (`-p`, `-r __node:=`/`__ns:=`, `--params-file`, `--log-level`);
//! - [`common`]: what both backends share (errors, framing, name resolution, stamps);
//! - [`env`]: `ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE` / `ROS_LOCALHOST_ONLY` and the DDS
//!   participant (loopback only when the range is `LOCALHOST`);
//! - [`qos`]: rclcpp's QoS profiles (default, sensor data, services, action status);
//! - [`node`]: a node with typed publishers/subscriptions, the `/acres/skill` action, the
//!   request/reply framing and the clock (`use_sim_time` with `/clock`);
//! - [`wire`]: how `acres_msgs` CDR travels through ros2-client's serde;
//! - [`polled`]: a client of `/acres/skill` that never blocks (the bridge node);
//! - [`skill_action`]: the action's goal, result and feedback;
//! - [`run`]: logging through `tracing` and a clean stop on SIGINT/SIGTERM;
//! - [`wake`]: a thread that waits for samples of its subscriptions (or another thread's
//!   wake-up) instead of polling for them.
//!
//! Middlewares reached: DDS ones over RTPS — ROS 2 nodes on rmw_fastrtps (framing `fastrtps`,
//! the default), rmw_cyclonedds (framing `cyclonedds`; tested against Cyclone DDS) and
//! rmw_connextdds (topics; its services need `RMW_CONNEXT_REQUEST_REPLY_MAPPING=extended`).
//! Not rmw_zenoh, which speaks Zenoh rather than RTPS: such sites need an rcl-based backend
//! (the planned `r2r` one) or a zenoh-bridge-ros2dds.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

pub mod args;
pub mod cloud;
pub mod common;
pub mod env;
pub mod run;
pub mod skill_action;
pub mod testing;
pub mod wire;

// The backend, chosen at build time: ros2-client/RustDDS (no ROS needed), or with the feature
// `r2r` rcl through r2r (a sourced ROS 2 needed to build). Both give these modules the same API.
#[cfg(not(feature = "r2r"))]
pub mod action;
#[cfg(feature = "r2r")]
#[path = "r2r/action.rs"]
pub mod action;
#[cfg(not(feature = "r2r"))]
pub mod node;
#[cfg(feature = "r2r")]
#[path = "r2r/node.rs"]
pub mod node;
#[cfg(not(feature = "r2r"))]
pub mod polled;
#[cfg(feature = "r2r")]
#[path = "r2r/polled.rs"]
pub mod polled;
#[cfg(not(feature = "r2r"))]
pub mod qos;
#[cfg(feature = "r2r")]
#[path = "r2r/qos.rs"]
pub mod qos;
#[cfg(not(feature = "r2r"))]
pub mod wake;
#[cfg(feature = "r2r")]
#[path = "r2r/wake.rs"]
pub mod wake;

/// The backend this build speaks ROS 2 through: `rustdds` (ros2-client) or `r2r` (rcl).
pub const BACKEND: &str = if cfg!(feature = "r2r") { "r2r" } else { "rustdds" };

pub use args::{ParamValue, RosArgs};
pub use env::RosEnv;
pub use node::{Framing, NodeError, Pub, RosNode, Sub};
pub use wake::{Waiter, Wake, ACTION_POLL};
