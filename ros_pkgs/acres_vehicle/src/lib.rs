//! The vehicle: what runs on the vehicle's computer, free of ROS and async.
//!
//! - [`scan`]: the scan function (360 ranges, 45° sectors, obstacle distance ahead) — the one
//!   used everywhere a scan is made.
//! - [`follower`]: the built-in path follower (pure pursuit and a speed profile).
//! - [`shield`]: passes or holds each command; never rewrites one.
//! - [`trajectory`]: refuses routes that leave the corridor.
//! - [`skills`]: the skill server (goto, scout, return_home, wait, stop, resume).

pub mod follower;
pub mod messages;
pub mod scan;
pub mod shield;
pub mod skills;
pub mod trajectory;

pub use skills::{
    EventDetail, EventName, Observation, Reply, ResultCode, ServerOptions, SkillEvent, SkillKind,
    SkillRequest, SkillServer, SkillState, Status,
};
