//! The planner behind one interface, the model session: the harness sends blocks (text, pictures,
//! tool results: only the new ones) and gets a reply (text, tool calls, a stop reason, usage and
//! latency). The scripted stand-in implements it here; the language-model clients (OpenAI
//! compatible, Anthropic) and the replay of a recorded run implement the same trait.
//!
//! - [`scripted`]: the stand-in planner with no network, a rule set acting through the tools.
//! - [`replay`]: recorded replies and latencies, no model call.

pub mod interface;
pub mod models;
pub mod planning;
pub mod replay;
pub mod scripted;
pub mod wake;

use std::sync::Arc;

pub use crate::planners::interface::{ModelErrorKind, Repairs};
use crate::planners::interface::{Stop, ToolCall, ToolDef, Usage};

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
    /// The model reasoned (it counted reasoning tokens) but gave no reasoning text.
    pub reasoning_hidden: bool,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Why the reply stopped.
    pub stop: Stop,
    /// Token counts.
    pub usage: Usage,
    /// Time of the try that answered, s (charged on the mission clock; failed tries and waits
    /// are not).
    pub latency_s: f64,
    /// Repairs the client made for this call.
    pub repairs: Repairs,
    /// The reply was replayed from the model-call cache (`--cache`), not asked for.
    pub cached: bool,
}

impl Reply {
    /// A text reply with nothing else (tests, the end of a recording).
    pub fn text(text: impl Into<String>, latency_s: f64) -> Self {
        Reply {
            text: text.into(),
            reasoning: None,
            reasoning_hidden: false,
            tool_calls: Vec::new(),
            stop: Stop::End,
            usage: Usage::default(),
            latency_s,
            repairs: Repairs::default(),
            cached: false,
        }
    }
}

/// A call that gave no reply.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// What kind of failure.
    pub kind: ModelErrorKind,
    /// What happened.
    pub message: String,
    /// Time charged on the mission clock, s: the time limit for a call cut at its limit, else 0
    /// (the world is held during failed tries and waits).
    pub latency_s: f64,
    /// Repairs the client made before the call failed.
    pub repairs: Repairs,
}

impl ModelError {
    /// A failure of `kind` with nothing charged.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError { kind, message: message.into(), latency_s: 0.0, repairs: Repairs::default() }
    }
}

/// What happens during one call besides its reply: each is written as a row when it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum CallEvent {
    /// A new try after a failed one, with the wait before it.
    Retry {
        /// The number of the new try, from 2.
        try_n: u32,
        /// The wait before it, s.
        wait_s: f64,
        /// Why the try before failed (`429`, `timeout`, `connection`, `status 503`).
        cause: String,
    },
    /// A wait at the call gate before a request.
    Wait {
        /// The wait, s.
        wait_s: f64,
        /// Why (`calls_per_minute`).
        cause: String,
    },
}

/// What the loop gives one call.
pub struct CallCtx<'a> {
    /// The time limit of the call, s: `call_s`, or what is left of `wake_s`, whichever is less.
    /// The client aborts a try at it; the call is then cut and the limit charged.
    pub limit_s: f64,
    /// Told of each new try and each wait as it happens.
    pub report: &'a mut dyn FnMut(CallEvent),
}

/// One conversation with a planner; it keeps the history in its own form.
pub trait Session: Send {
    /// Sends the new blocks and returns the reply.
    fn send(&mut self, blocks: &[Block], ctx: &mut CallCtx) -> Result<Reply, ModelError>;
    /// The cost of a usage, USD (an estimate from the prices of the model file).
    fn usd(&self, _usage: &Usage) -> f64 {
        0.0
    }
    /// The most a call with these new blocks can use (the history, the new blocks and a full
    /// reply): the budget caps stop a run before a call that could pass them.
    fn estimate(&self, _blocks: &[Block]) -> Usage {
        Usage::default()
    }
    /// Told of the mission time, the running skill and its progress at each pose row (every
    /// 0.5 s of mission time); an agent's session shows them to the waiting agent.
    fn observe(&mut self, _t_s: f64, _skill: Option<&str>, _progress: f64) {}
    /// Told that a wake-up's turn is over (the planner ended it, or a limit did).
    fn turn_over(&mut self) {}
    /// The results of the last tool calls of a turn that the wake-up's time limit (`wake_s`)
    /// ended right after they ran: they are not sent as a model call. A model keeps them out of
    /// its history (the default); an agent, whose call waits for its answer, gets them.
    fn results_of_ended_turn(&mut self, _blocks: &[Block]) {}
}

/// What starts sessions: a model configuration.
pub trait Client: Send + Sync {
    /// The configuration's name (as in run folder names).
    fn name(&self) -> &str;
    /// Starts a session with the system text and the tools; fails on session settings that
    /// cannot work (a missing key), before any call.
    fn start(&self, system: &str, tools: &[ToolDef]) -> Result<Box<dyn Session>, ModelError>;
    /// Starts a session whose requests carry the run's `seed` where the provider takes one
    /// (the default: [`Client::start`], the seed unused).
    fn start_seeded(
        &self,
        system: &str,
        tools: &[ToolDef],
        seed: u64,
    ) -> Result<Box<dyn Session>, ModelError> {
        let _ = seed;
        self.start(system, tools)
    }
    /// The sampling settings a session started with `seed` sends (`seed`, `temperature`), as
    /// the run row's planner options record them; none by default.
    fn sampling(&self, seed: u64) -> serde_json::Map<String, serde_json::Value> {
        let _ = seed;
        serde_json::Map::new()
    }
    /// The serving stack as the server reports it (the run row's `serving`); none by default.
    fn serving(&self) -> Option<models::serving::Serving> {
        None
    }
}
