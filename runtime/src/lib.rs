//! The run-time library of acres: what a planner and the skill server know about the farm.
//!
//! - [`geom`]: points, poses, polylines, polygons, oriented boxes.
//! - [`condition`]: ground conditions and their speed limits.
//! - [`map`]: the scouting map (`acres-map-1`) and its corridor.
//! - [`route`]: routes over the lanes and the mission legs of a field.
//! - [`costs`]: cost tables per condition (time and energy per leg) and plan costs.
//! - [`plancheck`]: the plan checker and its reasons.
//! - [`mission`]: the classical mission planner (best visit order, removal over limits).
//!
//! Everything here is deterministic and free of I/O except loading files.

pub mod condition;
pub mod costs;
pub mod geom;
pub mod map;
pub mod mission;
pub mod plancheck;
pub mod route;

pub use condition::{Condition, SpeedLimits};
pub use geom::{Obb, Polyline, Pose, Vec2};
pub use map::{Field, Map, MapError};
pub use route::{LaneGraph, Leg, LegKind};
