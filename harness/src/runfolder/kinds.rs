//! The closed sets of words in run rows: modes, profiles, worlds, wake reasons, end codes, stops,
//! views.
//!
//! Each is a serde enum written in snake_case; an unknown word fails the decode of its row.
//! [`Mode`] and friends also have `as_str()` for tables and folder names.

use serde::{Deserialize, Serialize};

pub use crate::planners::interface::{Stop, WakeReason};

/// The mode of a run: who plans and which tools it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// No model: the mission planner orders the fields, the skills drive.
    Classical,
    /// A model with read, dispatch and note.
    Text,
    /// A model with look, read, dispatch, note and a map picture in each wake-up.
    Visual,
    /// As visual, plus plan; goto and scout need an accepted plan.
    Checked,
}
words!(Mode { Classical => "classical", Text => "text", Visual => "visual", Checked => "checked" });

/// The input profile: which facts the planner gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// Only what a real vehicle has (the default).
    #[default]
    Vehicle,
    /// Also the object list of the simulator and the fuel energy of the core.
    Simulator,
}
words!(Profile { Vehicle => "vehicle", Simulator => "simulator" });

/// What plans in a run: the run row's `planner.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlannerKind {
    /// The classical rule set (mode `classical`).
    Classical,
    /// The scripted stand-in.
    Scripted,
    /// A language model behind a model client.
    Model,
    /// An external agent through a face.
    Agent,
    /// Recorded replies.
    Replay,
}
words!(PlannerKind {
    Classical => "classical",
    Scripted => "scripted",
    Model => "model",
    Agent => "agent",
    Replay => "replay"
});

/// The face through which an external agent plans: the run row's `planner.face`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AgentFace {
    /// The MCP server over stdio.
    #[serde(rename = "mcp-stdio")]
    McpStdio,
    /// The MCP server over streamable HTTP on 127.0.0.1.
    #[serde(rename = "mcp-http")]
    McpHttp,
    /// The line protocol on a Unix socket.
    #[serde(rename = "line")]
    Line,
}
words!(AgentFace { McpStdio => "mcp-stdio", McpHttp => "mcp-http", Line => "line" });

/// The world of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum World {
    /// The core in the process of the harness.
    Core,
    /// The skill server in a ROS 2 process, over the link.
    Link,
}
words!(World { Core => "core", Link => "link" });

/// How a run ended: the `end` of the end row and of its score.
///
/// Only [`EndCode::Done`] can be a success; every other code names the limit, the fault or the
/// loss that ended the run. [`EndCode::Incomplete`] is never written by a run: it is the end of
/// the score of a folder without an end row (a run going on, or killed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndCode {
    /// The planner ended a turn while no skill ran, no timer was set and no scenario event waited.
    Done,
    /// `limits.wake_ups` wake-ups were used.
    LimitWakeUps,
    /// `limits.tool_calls` tool calls were used.
    LimitToolCalls,
    /// The mission time reached `limits.sim_s`.
    LimitSimTime,
    /// The wall time reached `limits.wall_s`.
    LimitWallTime,
    /// The vehicle drove less than 50 m in `limits.stall_s` of mission time.
    LimitStalled,
    /// The model file's `calls_per_run` requests were made.
    LimitModelCalls,
    /// The next model call could pass a budget cap.
    Budget,
    /// A tool read the simulator's truth in the vehicle profile.
    TruthRead,
    /// Model calls failed (after their tries) while nothing else could go on.
    ModelError,
    /// The link to the skill server was lost.
    LinkLost,
    /// The loop stopped without an end code (a defect of the harness).
    #[default]
    Error,
    /// Not an end of a run: the score of a folder without an end row.
    Incomplete,
}
words!(EndCode {
    Done => "done",
    LimitWakeUps => "limit_wake_ups",
    LimitToolCalls => "limit_tool_calls",
    LimitSimTime => "limit_sim_time",
    LimitWallTime => "limit_wall_time",
    LimitStalled => "limit_stalled",
    LimitModelCalls => "limit_model_calls",
    Budget => "budget",
    TruthRead => "truth_read",
    ModelError => "model_error",
    LinkLost => "link_lost",
    Error => "error",
    Incomplete => "incomplete",
});

impl EndCode {
    /// Every end code, in the order of the enum.
    pub const ALL: [EndCode; 13] = [
        EndCode::Done,
        EndCode::LimitWakeUps,
        EndCode::LimitToolCalls,
        EndCode::LimitSimTime,
        EndCode::LimitWallTime,
        EndCode::LimitStalled,
        EndCode::LimitModelCalls,
        EndCode::Budget,
        EndCode::TruthRead,
        EndCode::ModelError,
        EndCode::LinkLost,
        EndCode::Error,
        EndCode::Incomplete,
    ];
}

/// The kind of one block sent to a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// Text; the block has `text`.
    Text,
    /// A picture; the block has `frame`.
    Image,
    /// The result of a tool call; the block has `tool_call_id` and `text`.
    ToolResult,
}
words!(BlockKind { Text => "text", Image => "image", ToolResult => "tool_result" });

/// The view of a picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// The whole map.
    Map,
    /// A region of the map.
    Zoom,
    /// Two frames side by side.
    Compare,
}
words!(View { Map => "map", Zoom => "zoom", Compare => "compare" });

/// Who gave a plan verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanSource {
    /// The plan checker of the run-time library.
    PlanChecker,
    /// The harness: unknown fields, the deadline and the fuel limit with the planner costs.
    Harness,
}
words!(PlanSource { PlanChecker => "plan_checker", Harness => "harness" });

/// The state of the reasoning text of a model in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningLogged {
    /// The model offered no reasoning: none came back and none was counted (the default; also
    /// runs without a model).
    #[default]
    NotOffered,
    /// The reasoning text is logged in `reasoning`, apart from the answer.
    Present,
    /// The model reasoned (it counted reasoning tokens, or sent redacted thinking) but the
    /// provider gave no text.
    Absent,
}
words!(ReasoningLogged { NotOffered => "not_offered", Present => "present", Absent => "absent" });

impl ReasoningLogged {
    /// `present` when any reply logged reasoning text, `absent` when a model reasoned without
    /// giving the text, else `not_offered`.
    pub fn of(text_replies: u64, hidden_replies: u64) -> ReasoningLogged {
        if text_replies > 0 {
            ReasoningLogged::Present
        } else if hidden_replies > 0 {
            ReasoningLogged::Absent
        } else {
            ReasoningLogged::NotOffered
        }
    }
}

/// What a run records (`--record`, the sweep spec's `record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Record {
    /// Both files: `episode.mcap` and `episode.interface.mcap`.
    #[default]
    All,
    /// `episode.interface.mcap` only (the vehicle's interface; no clouds, no planner topics).
    Interface,
    /// No recording: the run folder holds `run.jsonl` and the frames only.
    None,
}
words!(Record { All => "all", Interface => "interface", None => "none" });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_serde() {
        // Every variant of every enum with hand-written words: a typo in one fails here.
        fn all<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug + Copy>(
            words: &[(T, &str)],
        ) -> usize {
            for (value, word) in words {
                assert_eq!(serde_json::to_value(value).unwrap(), serde_json::json!(word), "{value:?}");
                assert_eq!(&serde_json::from_value::<T>(serde_json::json!(word)).unwrap(), value, "{word}");
            }
            words.len()
        }
        let n = all(Mode::WORDS)
            + all(Profile::WORDS)
            + all(World::WORDS)
            + all(EndCode::WORDS)
            + all(WakeReason::WORDS)
            + all(Stop::WORDS)
            + all(PlanSource::WORDS)
            + all(BlockKind::WORDS)
            + all(View::WORDS)
            + all(ReasoningLogged::WORDS)
            + all(Record::WORDS)
            + all(PlannerKind::WORDS)
            + all(AgentFace::WORDS)
            + all(crate::planners::models::config::Provider::WORDS)
            + all(crate::planners::models::config::ConstrainedForm::WORDS)
            + all(crate::world::LossKind::WORDS);
        assert!(n > 40, "{n} words");
        assert_eq!(EndCode::WORDS.len(), EndCode::ALL.len());
    }
}
