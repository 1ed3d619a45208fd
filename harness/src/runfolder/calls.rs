//! The rows of model calls and tool calls: `model_send`, `model_reply`, `model_error`,
//! `model_retry`, `model_wait` and `tool`, with their parts (blocks, tool calls, usage).
//!
//! They are variants of [`Row`](super::rows::Row) and are re-exported by [`rows`](super::rows).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::kinds::BlockKind;
use super::rows::nullable;
pub use crate::planners::interface::{ModelErrorKind, Repairs, Stop, ToolCall, Usage};

/// One block sent to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Block {
    /// The kind of block.
    pub kind: BlockKind,
    /// The text (text and tool_result blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The frame (image blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// The tool call answered (tool_result blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// The new blocks of one model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSendRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The call number, from 1.
    pub call: u64,
    /// The wake-up of the call.
    pub wake: u64,
    /// The blocks sent (only the new ones).
    pub blocks: Vec<Block>,
    /// The blocks are a reminder (the reply before had no tool call it could act on): counted
    /// in the score's `reminders`. Absent (false) otherwise, and in folders of `rows_version` 1.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reminder: bool,
}

/// The reply of one model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelReplyRow {
    /// Mission time, s: the request time plus the latency.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The call number.
    pub call: u64,
    /// The time of the call, s (charged on the mission clock).
    pub latency_s: f64,
    /// Why the reply stopped.
    pub stop: Stop,
    /// The answer text.
    pub text: String,
    /// The reasoning text, apart from the answer, or null.
    #[serde(deserialize_with = "nullable")]
    pub reasoning: Option<String>,
    /// The model reasoned but gave no reasoning text.
    #[serde(default)]
    pub reasoning_hidden: bool,
    /// The tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// The token counts.
    pub usage: Usage,
    /// The estimated cost of the call, USD (from the model file's prices).
    pub usd: f64,
    /// The repairs of the call.
    #[serde(default)]
    pub repairs: Repairs,
    /// The reply was replayed from the model-call cache (`--cache`): its latency, tokens and
    /// cost are those it had when it was made. Absent (false) in rows of replies asked for, and
    /// in folders written before the key.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// The time charged on the mission clock for the call, s (its latency, or the time limit
    /// that cut it, in whole control steps). Absent in folders of `rows_version` 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged_s: Option<f64>,
    /// The call passed its time limit: its tool calls did not act, and it counts as a model
    /// error. Absent (false) otherwise, and in folders of `rows_version` 1.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

/// A model call that gave no reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelErrorRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The call number.
    pub call: u64,
    /// What kind of failure.
    pub kind: ModelErrorKind,
    /// What went wrong.
    pub error: String,
    /// The time the call took before it failed, s (the limit of a cut call, else 0).
    pub latency_s: f64,
    /// The repairs of the call.
    #[serde(default)]
    pub repairs: Repairs,
    /// The time charged on the mission clock for the call, s (`latency_s` in whole control
    /// steps). Absent in folders of `rows_version` 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged_s: Option<f64>,
}

/// A new try of a model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelRetryRow {
    /// Mission time, s (the world is held).
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The call number.
    pub call: u64,
    /// The number of the new try, from 2.
    #[serde(rename = "try")]
    pub try_n: u32,
    /// The wait before the try, s.
    pub wait_s: f64,
    /// Why: 429, timeout, connection, status.
    pub cause: String,
}

/// A wait before a model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelWaitRow {
    /// Mission time, s (the world is held).
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The wait, s.
    pub wait_s: f64,
    /// Why (for example `calls_per_minute`).
    pub cause: String,
}

/// One tool call and its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The wake-up of the call.
    pub wake: u64,
    /// The call id of the model reply.
    pub call_id: String,
    /// The tool name.
    pub name: String,
    /// The arguments as JSON.
    pub arguments: Value,
    /// The result object.
    pub result: Map<String, Value>,
    /// Whether the result is an error result.
    pub error: bool,
    /// The result code of the skill request the call made (the skill server's reply), counted
    /// in the score's `codes`. Absent for calls that made none, and in folders of `rows_version` 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<acres_vehicle::ResultCode>,
    /// The arguments did not match the tool's schema, or the tool is unknown: counted in the
    /// score's `schema_errors`. Absent (false) otherwise, and in folders of `rows_version` 1.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub schema_error: bool,
}
