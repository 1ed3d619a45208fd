//! The harness of acres: runs mission scenarios with a planner in the loop.
//!
//! The crate is arranged in rooms by layer; a room uses only the rooms before it in this list
//! (`harness/tests/rooms.rs` checks the imports):
//!
//! - [`scenario`]: the scenario format `acres-harness-scenario-1` (the `acres_scenario` package).
//! - [`runfolder`]: the run folder contract `acres-harness-run-1`: rows, the writer, validate,
//!   score, and the episode recordings ([`runfolder::recording`]).
//! - [`world`]: the world of a run behind [`world::WorldPort`]: the in-process ACRES Core
//!   ([`world::sim`]), the link world ([`world::link`]), the knowledge store built from scans
//!   ([`world::knowledge`]).
//! - [`planners`]: the planner interface (model sessions), the scripted planner, replay, the
//!   language models ([`planners::models`]), and what planners use: cost tables, the plan
//!   checker, the classical mission planner ([`planners::planning`]).
//! - [`tools`]: the planner's tools, their schemas, their execution, and the map pictures
//!   ([`tools::picture`], PNG 640 × 692).
//! - [`run`]: the planner loop, the classical rule set, success checks and the score.
//! - [`agents`]: external agents as planners: the session fed by an agent's calls, the MCP
//!   server face and the line protocol face.
//! - [`sweep`]: sweeps (many runs from one spec, resumable, sharded on Slurm or Kubernetes) and
//!   the leaderboard that merges them.
//! - [`review`]: the review of a run folder: the web viewer and the MP4 video, and what they share.
//! - [`cli`]: the faces: the commands of the `acres-harness` binary.
//!
//! Below every room: [`clock`] (the wall clock), [`local_http`] (the local HTTP faces' Host and
//! Origin rule) and [`HARNESS_VERSION`].

// No function of the harness over 80 lines (clippy.toml: too-many-lines-threshold); tests aside.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

#[macro_use]
mod words;

pub mod agents;
pub mod cli;
pub mod clock;
pub mod local_http;
pub mod planners;
pub mod review;
pub mod run;
pub mod runfolder;
pub mod sweep;
pub mod tools;
pub mod world;

/// The harness's version (the `identity.harness` of the run row, the link's hello).
pub const HARNESS_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The scenario format (the `acres_scenario` package), under the name the harness has always
/// used for it.
pub use acres_scenario as scenario;
