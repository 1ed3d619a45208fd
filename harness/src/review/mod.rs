//! The review of a run folder: what the viewer and the video share, and each of them.
//!
//! Both read a run folder only through [`crate::runfolder::rows::Row`] (one decode) and the map
//! through the scenario loader.
//!
//! - [`model`]: [`model::RunLog`] (the decoded rows) and [`model::Timeline`] (what the parts show).
//! - [`source`]: [`source::WorldSource`], [`source::WorldData`]: the World pane's data, and its
//!   picture scene at a time; [`source::RunLogSource`] (`run.jsonl`) and
//!   [`source::EpisodeSource`] (with the objects and returns of the episode recording).
//! - [`episode`]: the objects and LiDAR returns of a run's `episode.mcap`.
//! - [`loaded`]: [`loaded::load`] (a run with its timeline, map and World data), the place and
//!   picture of each plan verdict.
//! - [`viewer`]: the web viewer (a minimal HTTP server on 127.0.0.1).
//! - [`video`]: MP4 videos (frames drawn in Rust, encoded by the system's ffmpeg).

pub mod episode;
pub mod loaded;
pub mod model;
pub mod source;
pub mod video;
pub mod viewer;

use serde::Serialize;

/// Where the world of the viewer's World pane and of the video comes from (`--world`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum WorldChoice {
    /// `run.jsonl` and the map, with the objects and LiDAR returns of the run's episode
    /// recording when the folder has one.
    Auto,
    /// The same, the episode recording required (refused for a folder without one).
    Bag,
    /// No world: the other parts only.
    None,
    /// The packaged game: not available in this build (refused with exit 2).
    Game,
}
