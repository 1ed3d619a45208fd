//! The harness of acres: runs mission scenarios with a planner in the loop.
//!
//! - [`scenario`]: the scenario format `acres-harness-scenario-1`, parsing and checks.
//! - [`picture`]: map pictures (PNG 640 × 692) for the planner and the run folder.
//! - [`runlog`]: the run folder contract `acres-harness-run-1`: rows, the writer, validate, score.

pub mod picture;
pub mod runlog;
pub mod scenario;
