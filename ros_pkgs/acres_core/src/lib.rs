//! ACRES Core: the simulated world.
//!
//! - [`objects`]: object kinds, bodies and places.
//! - [`lidar`]: the multi-ring LiDAR raycast against objects and the ground.

pub mod lidar;
pub mod objects;
