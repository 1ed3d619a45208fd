//! The harness of acres: runs mission scenarios with a planner in the loop.
//!
//! - [`scenario`]: the scenario format `acres-harness-scenario-1` (the `acres_scenario` package).
//! - [`sim`]: ACRES Core and the skill server in one deterministic loop; the cost-table learner.
//! - [`planning`]: cost tables and plan costs, the plan checker, the classical mission planner.
//! - [`world`]: the world of a run behind [`world::WorldPort`] (in-process ACRES Core).
//! - [`link`]: the link world (`--world link`): the same port over the bridge's TCP socket.
//! - [`knowledge`]: the knowledge store built from scans.
//! - [`planner`]: the planner interface (model sessions), the scripted planner, replay.
//! - [`tools`]: the planner's tools, their schemas and their execution.
//! - [`run`]: the planner loop, the classical rule set, success checks and the score.
//! - [`picture`]: map pictures (PNG 640 × 692) for the planner and the run folder.
//! - [`runlog`]: the run folder contract `acres-harness-run-1`: rows, the writer, validate, score.
//! - [`viewer`]: the web viewer of run folders (a minimal HTTP server on 127.0.0.1).
//! - [`video`]: MP4 videos of run folders (frames drawn in Rust, encoded by the system's ffmpeg).
//! - [`cli`]: the commands of the `acres-harness` binary.

pub mod cli;
pub mod knowledge;
pub mod link;
pub mod models;
pub mod picture;
pub mod planner;
pub mod planning;
pub mod recording;
pub mod run;
pub mod runlog;
pub mod sim;
pub mod tools;
pub mod video;
pub mod viewer;
pub mod world;

/// The scenario format (the `acres_scenario` package), under the name the harness has always
/// used for it.
pub use acres_scenario as scenario;
