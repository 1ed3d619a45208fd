//! The run folder contract `acres-harness-run-1`: rows, the writer, validate and score.
//!
//! A run writes one folder `<out>/<scenario>__<mode>__<model>/`:
//!
//! ```text
//! t1_01_one_field__checked__scripted/
//!     run.jsonl          one JSON object a line, in run order (a `Row`)
//!     frames/f0001.png   each picture the planner got, PNG 640 x 692
//!     proxy.jsonl        (an agent's run with the metering proxy) its model calls
//! ```
//!
//! A viewer, the score table and the video builder need only this folder.
//!
//! # Format
//!
//! Each line of `run.jsonl` is one [`Row`], a JSON object tagged by `"type"` (snake_case), with
//! `t` (mission time, s) and `wall` (wall time, UNIX seconds). The first row is `run` (what was
//! run: scenario, mode, profile, model, identity, system text, tools, limits), the last row is
//! `end` (the end code, the checks and the [`Score`]). Between them come `pose` rows (one each
//! 0.5 s of mission time from t = 0), wake-ups, model calls, tool calls, frames, plan verdicts,
//! skill server events, requests, notes and link records. Unknown keys and unknown types are
//! refused on decode. A line is at most [`MAX_LINE_BYTES`] long. `docs/run-folder.md` lists
//! every field; `harness/schemas/run_v1.schema.json` is the same contract as JSON Schema.
//!
//! # Layout
//!
//! - [`calls`]: the rows of model calls and tool calls (re-exported by [`rows`]).
//! - [`kinds`]: the closed sets of words (mode, profile, wake reason, stop, view, ...).
//! - [`rows`]: the row types, one encode ([`Row::encode`]) and one decode ([`Row::decode`]).
//! - [`writer`]: [`RunWriter`], which writes rows and frames, flushing each line at once and
//!   removing the values of secret environment variables.
//! - [`validate`]: [`validate_folder`] and [`validate_tree`], the checks of the contract.
//! - [`proxy`]: `proxy.jsonl`, the model calls of an agent metered by `acres-harness proxy`.
//! - [`score`]: the [`Score`] of a run, [`load_scores`], [`format_table`] and [`to_json`].
//!
//! **Invariant:** a run killed between two writes leaves a folder that validates as
//! `Incomplete`, never as `Invalid` (whole lines only; a frame file may precede its row).

pub mod calls;
pub mod kinds;
pub mod proxy;
pub mod recording;
pub mod rows;
pub mod score;
pub mod validate;
pub mod writer;

pub use rows::Row;
pub use score::{format_table, load_scores, to_json, Score, ScoreLine};
pub use validate::{validate_folder, validate_tree, FolderReport, Problem, Status};
pub use writer::{RunWriter, Secrets};

/// The schema name written in the `run` row and checked by validate.
pub const SCHEMA: &str = "acres-harness-run-1";

/// The file of the rows inside a run folder.
pub const RUN_FILE: &str = "run.jsonl";

/// The folder of the pictures inside a run folder.
pub const FRAMES_DIR: &str = "frames";

/// The width of every picture, pixels.
pub const FRAME_WIDTH_PX: u32 = 640;

/// The height of every picture, pixels.
pub const FRAME_HEIGHT_PX: u32 = 692;

/// The mission time between two `pose` rows, s.
pub const POSE_PERIOD_S: f64 = 0.5;

/// The tolerance on pose times, s.
pub const POSE_TOLERANCE_S: f64 = 1e-6;

/// The longest drive between two consecutive `pose` rows that validate accepts, m.
pub const MAX_POSE_JUMP_M: f64 = 10.0;

/// The longest line of `run.jsonl`, bytes (without the newline). The writer refuses longer rows.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// The folder name of a run: `<scenario>__<mode>__<model>`.
pub fn folder_name(scenario: &str, mode: &str, model: &str) -> String {
    format!("{scenario}__{mode}__{model}")
}

/// The relative file of a frame: `frames/<id>.png`.
pub fn frame_file(id: &str) -> String {
    format!("{FRAMES_DIR}/{id}.png")
}

/// Whether `id` is a frame identifier: `f` and at least four digits (`f0001`).
pub fn is_frame_id(id: &str) -> bool {
    id.strip_prefix('f').is_some_and(|d| d.len() >= 4 && d.bytes().all(|b| b.is_ascii_digit()))
}
