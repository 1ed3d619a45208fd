//! The stub server's script: a list of assistant turns, each answered once per conversation, with
//! faults injected per turn; after the last turn the stub plays the scripted planner (a competent
//! model for every shipped scenario) or answers `Done.`.
//!
//! ```json
//! {"model": "stub-model", "then": "scripted", "delay_s": 0.0,
//!  "turns": [
//!    {"fault": "status", "status": 429, "retry_after_s": 1.5},
//!    {"fault": "delay", "delay_s": 40},
//!    {"content": "{\"name\": \"read\", \"arguments\": {\"what\": \"vehicle\"}}"},
//!    {"tool_calls": [{"name": "teleport", "arguments": {}}]},
//!    {"content": "I will", "stop": "max_tokens"},
//!    {"empty": true},
//!    {"reasoning": "the lane is clear"},
//!    {"fault": "refuse_pictures"},
//!    {"fault": "refuse_pictures", "server": "llama.cpp"},
//!    {"fault": "context"}
//!  ]}
//! ```
//!
//! A fault applies to the first `times` requests (default 1) that reach its turn; the next
//! request gets the turn's answer and moves on. `delay` waits and then answers in the same
//! request. A turn without `content`, `tool_calls`, `empty` or `reasoning` is answered by the
//! `then` player. `refuse_pictures` answers as the stub (400 naming images), or as `llama.cpp`
//! (500 "image input is not supported", a model without its projector) or `vllm` (400, a
//! text-only model). `context` answers llama.cpp's 400 `exceed_context_size_error`; the script's
//! `n_ctx` answers it to every request past that many tokens (four characters a token), as a
//! server with a small window does.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the stub does after the scripted turns (and for turns with no answer of their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Then {
    /// Plays the harness's scripted planner as the model.
    #[default]
    Scripted,
    /// Answers `Done.` with no tool call.
    Done,
}

/// A fault of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// An error status (`status`: 429 with or without `retry_after_s`, 500, 503, 408, …).
    Status,
    /// Waits `delay_s`, then answers (past the call limit the client has gone).
    Delay,
    /// Closes the connection without an answer.
    Drop,
    /// Answers 200 with a body that is not JSON.
    Malformed,
    /// Refuses a request with pictures, in the form of `server`.
    RefusePictures,
    /// Answers llama.cpp's 400 `exceed_context_size_error`.
    Context,
}

/// A tool call of a scripted turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCall {
    /// The tool name (any name: unknown tools are a fault to test).
    pub name: String,
    /// The arguments (anything: arguments that break the schema are a fault to test).
    #[serde(default)]
    pub arguments: Value,
}

/// One assistant turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// A fault before the answer.
    #[serde(default)]
    pub fault: Option<Fault>,
    /// How many requests the fault applies to. Default 1.
    #[serde(default)]
    pub times: Option<u32>,
    /// The status of a `status` fault. Default 500.
    #[serde(default)]
    pub status: Option<u16>,
    /// The server whose refusal `refuse_pictures` copies: `stub` (default), `llama.cpp`, `vllm`.
    #[serde(default)]
    pub server: Option<String>,
    /// The `Retry-After` header of a `status` fault, s.
    #[serde(default)]
    pub retry_after_s: Option<f64>,
    /// The wait of a `delay` fault, s.
    #[serde(default)]
    pub delay_s: Option<f64>,
    /// The answer text (a tool call written as text goes here).
    #[serde(default)]
    pub content: Option<String>,
    /// Native tool calls.
    #[serde(default)]
    pub tool_calls: Option<Vec<ScriptCall>>,
    /// Reasoning text (OpenAI `reasoning_content`, Anthropic `thinking`).
    #[serde(default)]
    pub reasoning: Option<String>,
    /// An empty answer: no text, no call.
    #[serde(default)]
    pub empty: bool,
    /// `end`, `max_tokens`, `refusal` or `tool_use` (without calls: a reply that stopped for a
    /// call it does not carry). Default: `tool_use` with calls, else `end`.
    #[serde(default)]
    pub stop: Option<String>,
    /// Token counts to report (`{"input": n, "output": n}`); default: from the sizes.
    #[serde(default)]
    pub usage: Option<ScriptUsage>,
}

/// Token counts of a scripted turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptUsage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
}

impl Turn {
    /// Whether the turn carries its own answer (else the `then` player answers).
    pub fn has_answer(&self) -> bool {
        self.content.is_some() || self.tool_calls.is_some() || self.empty || self.reasoning.is_some()
    }
}

/// A stub script.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The model name `/v1/models` lists. Default `stub-model`.
    #[serde(default)]
    pub model: Option<String>,
    /// The turns, in order, per conversation.
    #[serde(default)]
    pub turns: Vec<Turn>,
    /// After the turns.
    #[serde(default)]
    pub then: Then,
    /// A wait before every answer, s (a model's latency).
    #[serde(default)]
    pub delay_s: f64,
    /// The context window, tokens: a longer request gets `exceed_context_size_error`.
    #[serde(default)]
    pub n_ctx: Option<u64>,
}

impl Script {
    /// Reads a script file; the error names the file and the JSON path.
    pub fn load(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        serde_path_to_error::deserialize(de)
            .map_err(|e| format!("{}: at {}: {}", path.display(), e.path(), e.inner()))
    }
    /// The model name.
    pub fn model(&self) -> &str {
        self.model.as_deref().unwrap_or("stub-model")
    }
}
