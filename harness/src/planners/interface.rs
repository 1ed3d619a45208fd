//! The planner interface's own types: what a planner is given (tool definitions, the reason of
//! a wake-up) and what it gives back (tool calls, token counts, why a reply stopped, what was
//! repaired, what kind of failure a call without a reply was). The run folder records them as
//! they are (its `rows` module re-exports them), in the serde forms of its rows.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool definition as the model gets it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    /// The tool name.
    pub name: String,
    /// The description the model reads.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub input_schema: Value,
}

/// One tool call asked by a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The call id of the provider.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments as JSON.
    pub arguments: Value,
}

/// The token counts of one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Input tokens, not cached.
    pub input_tokens: u64,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Every token: input, output, cache read and cache write (counted the same way in the
    /// budget, the `end` row and a cut-off run's partial score).
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, u: Usage) {
        self.input_tokens += u.input_tokens;
        self.output_tokens += u.output_tokens;
        self.cache_read_tokens += u.cache_read_tokens;
        self.cache_write_tokens += u.cache_write_tokens;
    }
}

/// The repairs of one model call (each is counted in the score).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repairs {
    /// Tool calls read from the reply's text.
    pub fallback_protocol: u64,
    /// Pictures replaced by one line of text.
    pub pictures_dropped: u64,
    /// Exchanges left out of the history to fit the context window (absent in rows written
    /// before context management: 0).
    #[serde(default)]
    pub context_trims: u64,
    /// Tool calls that came as a schema-constrained JSON object (`tools = "constrained"`; absent
    /// in rows written before it: 0).
    #[serde(default)]
    pub constrained_calls: u64,
}

impl Repairs {
    /// True when nothing was repaired.
    pub fn is_empty(&self) -> bool {
        *self == Repairs::default()
    }
}

/// What kind of failure a model call without a reply was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelErrorKind {
    /// No usable reply after the tries (status, connection, timeout, malformed reply).
    NoReply,
    /// Cut at the call's time limit (the limit is charged).
    TimeLimit,
    /// Refused by a limit of the model file or the session (a missing key, the call gate).
    Limit,
    /// The request does not fit the context window: the harness's estimate after leaving out
    /// every exchange it may, or the server's own context error. Never tried again.
    Context,
}

/// Why the planner was woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WakeReason {
    /// The run starts; the message has the instruction.
    Start,
    /// A skill ended; the message has the result code and the cause.
    SkillEnded,
    /// Profile vehicle: the LiDAR saw returns on a leg.
    ReturnsOnRoute,
    /// Profile simulator: an object came into the reach of the sensors.
    ObjectSeen,
    /// A recovery mode is on and the shield held the vehicle.
    Stuck,
    /// The scenario added a request of the operator.
    Request,
    /// The timer of wait ended, or the period `wake_every_s` went by.
    Timer,
    /// A model call gave no reply, no skill runs, and 30 s went by.
    ModelError,
}
words!(WakeReason {
    Start => "start",
    SkillEnded => "skill_ended",
    ReturnsOnRoute => "returns_on_route",
    ObjectSeen => "object_seen",
    Stuck => "stuck",
    Request => "request",
    Timer => "timer",
    ModelError => "model_error",
});

/// Why a model reply stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The model ended its turn.
    End,
    /// The model asks for tool calls.
    ToolUse,
    /// The token limit cut the reply.
    MaxTokens,
    /// The model refused.
    Refusal,
}
words!(Stop { End => "end", ToolUse => "tool_use", MaxTokens => "max_tokens", Refusal => "refusal" });
