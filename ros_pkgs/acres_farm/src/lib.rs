//! The farm model of acres: what the world, the skill server, the scenario loader and the
//! planners all know about the farm.
//!
//! - [`geom`]: points, poses, polylines, polygons, oriented boxes.
//! - [`condition`]: ground conditions and their speed limits.
//! - [`map`]: the scouting map (`acres-map-1`) and its corridor.
//! - [`route`]: routes over the lanes and the mission legs of a field.
//! - [`objects`]: the objects on the farm (kinds, bodies) and the places they are put at.
//!
//! Everything here is deterministic and free of I/O except loading map files; it reads no
//! environment variables.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

pub mod condition;
pub mod geom;
pub mod map;
pub mod objects;
pub mod route;

pub use condition::{Condition, SpeedLimits};
pub use geom::{Obb, Polyline, Pose, Vec2};
pub use map::{Field, Map, MapError, HOME};
pub use route::{LaneGraph, Leg, LegKind};
