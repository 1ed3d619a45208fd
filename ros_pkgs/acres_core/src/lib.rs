//! ACRES Core: the simulated world, deterministic and free of ROS and async; and, with the
//! default feature `ros`, its ROS 2 node ([`node`], the executable `acres_core_node`).
//!
//! - [`vehicle`]: kinematic steering, conditions' physics, the fuel energy model.
//! - [`objects`]: object kinds, bodies and the three forms of place (from `acres_farm`).
//! - [`lidar`]: the multi-ring LiDAR raycast against objects and the ground.
//! - [`world`]: the world stepped at a fixed control step: vehicle, objects, events, contact.
//! - [`digest`]: the running digest and the seeded generator.
//! - [`sensing`]: the scenario's sensing noise on the LiDAR's returns and the odometry.
//! - [`world_of`]: the world of a scenario (its map, condition, start, objects and events).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

pub mod digest;
pub mod lidar;
#[cfg(feature = "ros")]
pub mod node;
mod scenario;
pub mod sensing;
pub mod vehicle;
pub mod world;

pub use acres_farm::objects;

pub use scenario::world_of;
pub use vehicle::{Command, VehicleParams};
pub use world::{ObjectAction, ObjectEvent, ObjectWhen, Odometry, World, WorldConfig};
