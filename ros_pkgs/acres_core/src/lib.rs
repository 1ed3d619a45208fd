//! ACRES Core: the simulated world, deterministic and free of ROS and async.
//!
//! - [`vehicle`]: kinematic steering, conditions' physics, the fuel energy model.
//! - [`objects`]: object kinds, bodies and the three forms of place.
//! - [`lidar`]: the multi-ring LiDAR raycast against objects and the ground.
//! - [`world`]: the world stepped at a fixed control step: vehicle, objects, events, contact.
//! - [`digest`]: the running digest and the seeded generator.

pub mod digest;
pub mod lidar;
pub mod objects;
pub mod vehicle;
pub mod world;

pub use vehicle::{Command, VehicleParams};
pub use world::{ObjectAction, ObjectEvent, ObjectWhen, Odometry, World, WorldConfig};
