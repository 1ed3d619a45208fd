//! Language models in the loop: model files, the provider registry, the HTTP clients and their
//! repairs, and the stub model server.
//!
//! - [`config`]: model files (TOML), checked whole before any run.
//! - [`cache`]: the model-call cache (`--cache DIR`): replies stored by request and replayed.
//! - [`body`]: the request body and the model file's settings in it.
//! - [`chat`]: the HTTP session every provider shares: history, pictures, tries, the gate.
//! - [`openai`], [`anthropic`]: the two wire protocols.
//! - [`repair`]: tool calls written as text, inline reasoning.
//! - [`context`]: the token estimate of a request and the exchanges left out to fit the window.
//! - [`gate`]: `calls_per_minute` across the runs and processes of one invocation.
//! - [`http`]: the runtime and the HTTP client.
//! - [`stub`]: the stub model server (OpenAI chat completions and Anthropic messages).
//! - [`probe`]: `models --config NAME`: the server's models and two test requests.
//! - [`constrained`]: `tools = "constrained"`: the schema of a turn and its reading.
//! - [`conform`]: `models --config NAME --probe`: the conformance probe, a table of verdicts.
//! - [`serving`]: the serving stack as the server reports it (the run row's `serving`).
//!
//! A provider is one module with a [`chat::Wire`] (or its own [`Client`]) and one line in
//! [`PROVIDERS`]; a model file then names it with `provider = "..."`.

pub mod anthropic;
pub mod body;
pub mod cache;
pub mod chat;
pub mod config;
pub mod conform;
pub mod constrained;
pub mod context;
pub mod gate;
pub mod http;
pub mod openai;
pub mod probe;
pub mod repair;
pub mod serving;
pub mod stub;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crate::planners::interface::ToolDef;
use crate::planners::scripted::ScriptedClient;
use crate::planners::{Client, ModelError, ModelErrorKind, Session};

use self::chat::{text_protocol, ChatSession, Wire};
use self::config::{ModelConfig, Provider, Resolved, ToolsMode};
use self::constrained::{constrained_protocol, turn_schema};
use self::gate::Gate;

/// What the command line adds to a model file.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    /// The scripted planner's think time per call, mission seconds.
    pub think_s: f64,
    /// The gate file of this invocation (made by the parent process).
    pub gate_file: Option<PathBuf>,
    /// The model-call cache (`--cache DIR`), if on.
    pub cache: Option<cache::CallCache>,
}

/// Makes the client of a model file.
pub type Factory = fn(&Resolved, &ClientOptions) -> Result<Box<dyn Client>, String>;

/// The factory of each provider.
fn factory(p: Provider) -> Factory {
    match p {
        Provider::OpenAi => |r, o| http_client(r, o, openai::OpenAiWire::new),
        Provider::Anthropic => |r, o| http_client(r, o, anthropic::AnthropicWire::new),
        Provider::Scripted => {
            |r, o| Ok(Box::new(ScriptedClient { think_s: o.think_s, name: r.name.clone() }))
        }
    }
}

/// The client of a resolved model file.
pub fn client(r: &Resolved, o: &ClientOptions) -> Result<Box<dyn Client>, String> {
    factory(r.config.provider)(r, o)
}

type NewWire<W> = fn(&str, &str, &[ToolDef]) -> W;

fn http_client<W: Wire + 'static>(
    r: &Resolved,
    o: &ClientOptions,
    new_wire: NewWire<W>,
) -> Result<Box<dyn Client>, String> {
    let gate = match (r.config.limits.calls_per_minute, &o.gate_file) {
        (Some(n), Some(f)) => {
            Some(Gate::new(f, n).map_err(|e| format!("the call gate file {}: {e}", f.display()))?)
        }
        _ => None,
    };
    Ok(Box::new(HttpClient {
        name: r.name.clone(),
        cfg: Arc::new(r.config.clone()),
        gate,
        new_wire,
        cache: o.cache.clone(),
        serving: OnceLock::new(),
    }))
}

/// A client over HTTP for one wire.
pub struct HttpClient<W: Wire> {
    name: String,
    cfg: Arc<ModelConfig>,
    gate: Option<Gate>,
    new_wire: NewWire<W>,
    cache: Option<cache::CallCache>,
    /// The serving stack, read once (at the first run's start).
    serving: OnceLock<Option<serving::Serving>>,
}

impl<W: Wire + 'static> Client for HttpClient<W> {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&self, system: &str, tools: &[ToolDef]) -> Result<Box<dyn Session>, ModelError> {
        self.start_with(self.cfg.clone(), system, tools)
    }

    fn start_seeded(
        &self,
        system: &str,
        tools: &[ToolDef],
        seed: u64,
    ) -> Result<Box<dyn Session>, ModelError> {
        // The seed is set for every provider (the cache keys on it) and sent where it is taken.
        let cfg = ModelConfig { seed: Some(seed), ..(*self.cfg).clone() };
        self.start_with(Arc::new(cfg), system, tools)
    }

    fn sampling(&self, seed: u64) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        if self.cfg.provider.takes_seed() {
            m.insert("seed".into(), seed.into());
        }
        if let Some(t) = self.cfg.temperature {
            m.insert("temperature".into(), t.into());
        }
        m
    }

    fn serving(&self) -> Option<serving::Serving> {
        self.serving.get_or_init(|| serving::read(&self.cfg)).clone()
    }
}

impl<W: Wire + 'static> HttpClient<W> {
    fn start_with(
        &self,
        cfg: Arc<ModelConfig>,
        system: &str,
        tools: &[ToolDef],
    ) -> Result<Box<dyn Session>, ModelError> {
        let key = cfg.api_key().map_err(|e| ModelError::new(ModelErrorKind::Limit, e))?;
        // No `context_tokens` in the file: the window the server reported at the run's start
        // (read only when the run asked for the serving stack) keeps the history inside it.
        let window = self.serving.get().and_then(|s| s.as_ref()?.window);
        let cfg = match (cfg.context_tokens, window) {
            (None, Some(n)) => Arc::new(ModelConfig { context_tokens: Some(n), ..(*cfg).clone() }),
            _ => cfg,
        };
        let mode = cfg.capabilities.tools;
        let mut wire = match mode {
            ToolsMode::Native => (self.new_wire)(&cfg.model, system, tools),
            ToolsMode::Text => (self.new_wire)(&cfg.model, &format!("{system}{}", text_protocol(tools)), &[]),
            ToolsMode::Constrained => {
                (self.new_wire)(&cfg.model, &format!("{system}{}", constrained_protocol(tools)), &[])
            }
        };
        if mode == ToolsMode::Constrained && !wire.constrain(turn_schema(tools)) {
            let msg = format!("provider {}: no constrained output (tools = \"constrained\")", cfg.provider);
            return Err(ModelError::new(ModelErrorKind::Limit, msg));
        }
        let mut s = ChatSession::new(cfg, wire, key, self.gate.clone(), tools).with_cache(self.cache.clone());
        s.constrained = mode == ToolsMode::Constrained;
        Ok(Box::new(s))
    }
}

/// The config type is also what `run` resolves; re-exported for the command line.
pub use self::config::resolve;
