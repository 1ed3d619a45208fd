//! The planner behind one interface, the model session: the harness sends blocks (text, pictures,
//! tool results: only the new ones) and gets a reply (text, tool calls, a stop reason, usage and
//! latency). The scripted stand-in implements it here; the language-model clients (OpenAI
//! compatible, Anthropic) and the replay of a recorded run implement the same trait.
//!
//! - [`scripted`]: the stand-in planner with no network, a rule set acting through the tools.
//! - [`replay`]: recorded replies and latencies, no model call.

pub mod replay;
pub mod scripted;

use std::sync::Arc;

use crate::runlog::rows::{Stop, ToolCall, ToolDef, Usage};

/// A block sent to the planner.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Text.
    Text(String),
    /// A picture of the visual memory.
    Image {
        /// The frame identifier, e.g. `f0003`.
        frame: String,
        /// The PNG.
        png: Arc<Vec<u8>>,
    },
    /// The result of a tool call: one JSON object as text.
    ToolResult {
        /// The call's identifier.
        call_id: String,
        /// The JSON text.
        content: String,
        /// The call failed (bad arguments, refused).
        is_error: bool,
    },
}

/// A planner's reply to one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The answer text (never the reasoning).
    pub text: String,
    /// Reasoning text, kept apart from the answer.
    pub reasoning: Option<String>,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Why the reply stopped.
    pub stop: Stop,
    /// Token counts.
    pub usage: Usage,
    /// Time the call took, s (charged on the mission clock).
    pub latency_s: f64,
}

/// A call that gave no reply.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// What happened.
    pub message: String,
    /// Time lost, s.
    pub latency_s: f64,
}

/// One conversation with a planner; it keeps the history in its own form.
pub trait Session: Send {
    /// Sends the new blocks and returns the reply.
    fn send(&mut self, blocks: &[Block]) -> Result<Reply, ModelError>;
    /// The cost of a usage, USD (an estimate from the prices of the model file).
    fn usd(&self, _usage: &Usage) -> f64 {
        0.0
    }
}

/// What starts sessions: a model configuration.
pub trait Client: Send + Sync {
    /// The configuration's name (as in run folder names).
    fn name(&self) -> &str;
    /// Starts a session with the system text and the tools.
    fn start(&self, system: &str, tools: &[ToolDef]) -> Box<dyn Session>;
}
