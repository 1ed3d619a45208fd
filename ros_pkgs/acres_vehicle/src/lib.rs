//! The vehicle: what runs on the vehicle's computer. The library is free of ROS and async; with
//! the default feature `ros`, [`node`] is the vehicle node (its executable is the package `acres_vehicle_node`).
//!
//! - [`scan`]: the scan function (360 ranges, 45° sectors, obstacle distance ahead) — the one
//!   used everywhere a scan is made.
//! - [`follower`]: the built-in path follower (pure pursuit and a speed profile).
//! - [`local_planner`]: the local planner trait (what steers a motion), the built-in driver
//!   and `pure_pursuit` as planners, and the factory the skill server makes them with.
//! - [`shield`]: passes or holds each command; never rewrites one.
//! - [`trajectory`]: refuses routes that leave the corridor.
//! - [`skills`]: the skill server (goto, scout, return_home, wait, stop, resume, and the
//!   scenario's learned skills).
//! - [`learned`]: learned skills (skill.toml + policy.onnx, run in-process by RTen).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

pub mod follower;
pub mod learned;
pub mod local_planner;
pub mod messages;
#[cfg(feature = "ros")]
pub mod node;
pub mod scan;
pub mod shield;
pub mod skills;
pub mod trajectory;

pub use skills::{
    EventDetail, EventName, Observation, Reply, ResultCode, ServerOptions, SkillEvent, SkillKind,
    SkillRequest, SkillServer, SkillState, Status, StatusRef,
};

/// The skill server's options of a scenario (speed limits of its condition, its `blocked_s`):
/// what the harness's in-process world and the vehicle node both serve with.
pub fn server_options(sc: &acres_scenario::Scenario) -> ServerOptions {
    let mut opts = ServerOptions::new(sc.condition.speed_limits());
    opts.blocked_s = sc.server.blocked_s;
    opts
}
