//! Model files: one TOML file per model configuration, in the harness's `model_configs/` folder
//! (or at a path given to `--model`). Every key of the reference's table is here; the file is
//! checked whole before any run starts, and a bad file is refused with the file, the key and the
//! problem (`model_configs/x.toml: at retry.tries: must be at least 1`). No file holds a key:
//! `api_key_env` names the environment variable that does, and it may be absent for local
//! servers. `docs/models.md` documents each key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A bad model file, or one that cannot be used here.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{file}: cannot read the model file: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A key is wrong (syntax, type, value).
    #[error("{file}: at {key}: {problem}")]
    Key {
        /// The file.
        file: PathBuf,
        /// The key path (`retry.tries`), or `(file)` for the whole file.
        key: String,
        /// What is wrong.
        problem: String,
    },
    /// No configuration of that name, and no such file.
    #[error("--model {name}: no model configuration of that name in {dir} and no such file; the configurations are: {known}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The folder searched.
        dir: PathBuf,
        /// The names found there.
        known: String,
    },
}

/// What a model can take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Capabilities {
    /// Pictures in user messages.
    pub images: bool,
    /// How tool calls travel: `true` native tool calls; `false` tools described in the system
    /// text and calls read from the reply's text (the fallback protocol); `"constrained"` the
    /// same, with each reply constrained by a JSON schema (one tool call or an end-of-turn text).
    pub tools: ToolsMode,
    /// Pictures inside tool results (else they follow in a user message).
    pub images_in_tool_results: bool,
    /// Several tool calls in one reply.
    pub parallel_tool_calls: bool,
    /// The request field that carries the schema of `tools = "constrained"`.
    pub constrained_form: ConstrainedForm,
}

/// The request field of the constrained protocol's schema (`[capabilities] constrained_form`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstrainedForm {
    /// `response_format: {"type": "json_schema", ...}`: OpenAI, vLLM, llama.cpp, Ollama's
    /// OpenAI-compatible endpoint.
    #[default]
    ResponseFormat,
    /// llama.cpp's own `json_schema` field: the schema itself.
    JsonSchema,
    /// Ollama's own `format` field: the schema itself.
    Format,
}

words!(ConstrainedForm { ResponseFormat => "response_format", JsonSchema => "json_schema", Format => "format" });

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            images: true,
            tools: ToolsMode::Native,
            images_in_tool_results: false,
            parallel_tool_calls: true,
            constrained_form: ConstrainedForm::ResponseFormat,
        }
    }
}

/// How tool calls travel between the harness and the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolsMode {
    /// The server's native tool calls (`tools = true`).
    Native,
    /// Tools in the system text, calls read from the reply's text (`tools = false`).
    Text,
    /// Tools in the system text, each reply one JSON object constrained by a schema: a tool call
    /// or an end-of-turn text (`tools = "constrained"`).
    Constrained,
}

impl Serialize for ToolsMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolsMode::Native => s.serialize_bool(true),
            ToolsMode::Text => s.serialize_bool(false),
            ToolsMode::Constrained => s.serialize_str("constrained"),
        }
    }
}

impl<'de> Deserialize<'de> for ToolsMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Word(String),
        }
        let expected = "expected true, false or \"constrained\"";
        match Raw::deserialize(d).map_err(|_| serde::de::Error::custom(expected))? {
            Raw::Bool(true) => Ok(ToolsMode::Native),
            Raw::Bool(false) => Ok(ToolsMode::Text),
            Raw::Word(w) if w == "constrained" => Ok(ToolsMode::Constrained),
            Raw::Word(w) => Err(serde::de::Error::custom(format!("\"{w}\": {expected}"))),
        }
    }
}

/// Which wire a model file's client speaks (`provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI's Chat Completions, and every compatible server (vLLM, llama.cpp, Ollama, ...).
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
    /// The scripted planner's stand-in, in the process (no server).
    Scripted,
}

words!(Provider { OpenAi => "openai", Anthropic => "anthropic", Scripted => "scripted" });

impl Provider {
    /// Whether its requests take a seed (OpenAI-compatible servers do; Anthropic's do not).
    pub fn takes_seed(self) -> bool {
        self == Provider::OpenAi
    }
}

impl<'de> Deserialize<'de> for Provider {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = String::deserialize(d)?;
        Provider::WORDS.iter().find(|(_, n)| *n == w).map(|(p, _)| *p).ok_or_else(|| {
            let names: Vec<&str> = Provider::WORDS.iter().map(|(_, n)| *n).collect();
            serde::de::Error::custom(format!(
                "unknown provider \"{w}\"; expected one of {}",
                names.join(", ")
            ))
        })
    }
}

/// The bounds of new tries (`[retry]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Retry {
    /// Tries of one call, the first included. Default 4.
    pub tries: u32,
    /// The wait before the second try, s. Default 2.
    pub wait_s: f64,
    /// Each further wait is this many times the one before. Default 2.
    pub factor: f64,
    /// The longest wait, s. Default 30.
    pub max_wait_s: f64,
    /// The waits of one call in all, s; a call that would wait longer gives up. Default 60.
    pub total_wait_s: f64,
}

impl Default for Retry {
    fn default() -> Self {
        Retry { tries: 4, wait_s: 2.0, factor: 2.0, max_wait_s: 30.0, total_wait_s: 60.0 }
    }
}

/// The call limits (`[limits]`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CallLimits {
    /// Calls of one run; then the run ends `limit_model_calls`.
    pub calls_per_run: Option<u64>,
    /// Requests (tries included) in any 60 s of wall time, across every run of one invocation.
    pub calls_per_minute: Option<u32>,
    /// Runs that use the service at the same time, at most.
    pub parallel_runs: Option<usize>,
    /// The service name: model files with the same name share the gate. Default: the base URL.
    pub service: Option<String>,
}

/// USD per million tokens (`[prices]`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Prices {
    /// Input tokens (not cached).
    pub input: f64,
    /// Output tokens, reasoning included.
    pub output: f64,
    /// Input tokens read from the cache.
    pub cache_read: f64,
    /// Input tokens written to the cache.
    pub cache_write: f64,
}

/// Where the prices come from (`[price_source]`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PriceSource {
    /// The page or document.
    pub source: String,
    /// The date the prices were read, YYYY-MM-DD.
    pub date: String,
}

/// One model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// `openai` (OpenAI and every compatible server), `anthropic`, or `scripted`.
    pub provider: Provider,
    /// The model identifier sent to the server.
    pub model: String,
    /// What the configuration is for (shown by `models`).
    #[serde(default)]
    pub description: String,
    /// The server's address, as the provider's SDK takes it: OpenAI-style ends in `/v1`,
    /// Anthropic's has no `/v1`. Default: the provider's hosted API.
    #[serde(default)]
    pub base_url: Option<String>,
    /// The environment variable that holds the key; absent for servers without keys.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The reasoning effort word (`low`, `medium`, `high`), sent through `effort_field`.
    #[serde(default)]
    pub effort: Option<String>,
    /// The most output tokens of one reply. Default 4096.
    #[serde(default = "default_max_output")]
    pub max_output_tokens: u32,
    /// The sampling temperature sent with every request (absent: the server's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The run's seed, set when a session starts (`Client::start_seeded`; not a file key): sent
    /// with every request where the provider takes one (`openai`), and a part of cache keys.
    #[serde(skip)]
    pub seed: Option<u64>,
    /// The HTTP timeout of one try, s: a try with no reply by then is tried again. Default 60.
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// The time limit of one call on the mission clock, s (the scenario's `limits.call_s` wins).
    #[serde(default)]
    pub call_timeout_s: Option<f64>,
    /// The time limit of all calls of one wake-up, s (the scenario's `limits.wake_s` wins).
    #[serde(default)]
    pub wake_timeout_s: Option<f64>,
    /// The request field of the effort, a dotted path (`reasoning_effort`,
    /// `chat_template_kwargs.enable_thinking`, `thinking`).
    #[serde(default)]
    pub effort_field: Option<String>,
    /// The value sent for each effort word (default: the word itself).
    #[serde(default)]
    pub effort_map: BTreeMap<String, toml::Value>,
    /// The request field of the output token limit (`max_tokens`, `max_completion_tokens`).
    #[serde(default)]
    pub max_tokens_param: Option<String>,
    /// The model's context window, tokens (a small one keeps fewer pictures).
    #[serde(default)]
    pub context_tokens: Option<u64>,
    /// Pictures kept in the history; older ones become one line of text.
    #[serde(default)]
    pub keep_pictures: Option<u32>,
    /// Tokens one picture costs (the budget estimate). Default 1200.
    #[serde(default = "default_image_tokens")]
    pub image_tokens: u64,
    /// The longest picture side the server takes, px; a larger picture becomes text.
    #[serde(default)]
    pub image_max_px: Option<u32>,
    /// The largest picture the server takes, bytes; a larger picture becomes text.
    #[serde(default)]
    pub image_max_bytes: Option<u64>,
    /// What the model can take.
    #[serde(default)]
    pub capabilities: Capabilities,
    /// New tries.
    #[serde(default)]
    pub retry: Retry,
    /// Call limits.
    #[serde(default)]
    pub limits: CallLimits,
    /// Prices.
    #[serde(default)]
    pub prices: Prices,
    /// Where the prices come from.
    #[serde(default)]
    pub price_source: PriceSource,
    /// The latency charged on the mission clock for each call, modelled from the reply's token
    /// counts; absent: the call's measured wall latency (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyModel>,
}

/// `[latency]`: a modelled latency, `call_s + input_token_s · prompt tokens + output_token_s ·
/// output tokens`, charged instead of the measured one so that two runs with greedy decoding
/// give the same rows (D99).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LatencyModel {
    /// Seconds per call.
    pub call_s: f64,
    /// Seconds per prompt token (input, cache read and cache write).
    pub input_token_s: f64,
    /// Seconds per output token.
    pub output_token_s: f64,
}

impl LatencyModel {
    /// The latency of a reply with these token counts, s.
    pub fn of(&self, u: &crate::planners::interface::Usage) -> f64 {
        let prompt = (u.input_tokens + u.cache_read_tokens + u.cache_write_tokens) as f64;
        self.call_s + self.input_token_s * prompt + self.output_token_s * u.output_tokens as f64
    }
}

fn default_max_output() -> u32 {
    4096
}
fn default_timeout() -> f64 {
    60.0
}
fn default_image_tokens() -> u64 {
    1200
}

/// A model configuration found by name or path.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The name (the file stem): in run folder names and the run row.
    pub name: String,
    /// The file.
    pub file: PathBuf,
    /// Its content.
    pub config: ModelConfig,
}

impl ModelConfig {
    /// Parses and checks a model file's text.
    pub fn parse(text: &str, file: &Path) -> Result<Self, ConfigError> {
        let key_err =
            |key: String, problem: String| ConfigError::Key { file: file.to_path_buf(), key, problem };
        let de = toml::Deserializer::new(text);
        let config: ModelConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let key = e.path().to_string();
            let key = if key == "." { "(file)".to_string() } else { key };
            key_err(key, e.into_inner().message().trim().to_string())
        })?;
        config.check().map_err(|(k, p)| key_err(k.to_string(), p))?;
        Ok(config)
    }

    /// Loads and checks a model file.
    pub fn load(file: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(file)
            .map_err(|source| ConfigError::Io { file: file.to_path_buf(), source })?;
        Self::parse(&text, file)
    }

    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.model.trim().is_empty() {
            return Err(("model", "must not be empty".into()));
        }
        if let Some(u) = &self.base_url {
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(("base_url", format!("\"{u}\" is not an http:// or https:// address")));
            }
            if self.provider == Provider::Anthropic && u.trim_end_matches('/').ends_with("/v1") {
                return Err((
                    "base_url",
                    format!("\"{u}\": an Anthropic base_url has no /v1 (the client adds /v1/messages)"),
                ));
            }
        }
        if self.capabilities.tools == ToolsMode::Constrained && self.provider != Provider::OpenAi {
            return Err((
                "capabilities.tools",
                format!(
                    "\"constrained\" needs an OpenAI-compatible server (provider openai), not {}",
                    self.provider
                ),
            ));
        }
        if let Some(k) = &self.api_key_env {
            let ok = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(("api_key_env", format!("\"{k}\" is not an environment variable name (the key itself never goes in a model file)")));
            }
        }
        self.check_numbers()
    }

    /// The numbers of the file: times, tokens, tries, limits, prices.
    fn check_numbers(&self) -> Result<(), (&'static str, String)> {
        let positive = |key: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err((key, format!("must be a positive number, found {v}")))
            }
        };
        positive("timeout_s", self.timeout_s)?;
        if let Some(v) = self.call_timeout_s {
            positive("call_timeout_s", v)?;
        }
        if let Some(v) = self.wake_timeout_s {
            positive("wake_timeout_s", v)?;
        }
        if let Some(t) = self.temperature {
            if !(t.is_finite() && (0.0..=2.0).contains(&t)) {
                return Err(("temperature", format!("must be a number from 0 to 2, found {t}")));
            }
        }
        if self.max_output_tokens == 0 {
            return Err(("max_output_tokens", "must be at least 1".into()));
        }
        if self.retry.tries == 0 {
            return Err(("retry.tries", "must be at least 1".into()));
        }
        positive("retry.wait_s", self.retry.wait_s)?;
        positive("retry.max_wait_s", self.retry.max_wait_s)?;
        positive("retry.total_wait_s", self.retry.total_wait_s)?;
        if !(self.retry.factor.is_finite() && self.retry.factor >= 1.0) {
            return Err(("retry.factor", format!("must be a number >= 1, found {}", self.retry.factor)));
        }
        if self.limits.calls_per_minute == Some(0) {
            return Err(("limits.calls_per_minute", "must be at least 1".into()));
        }
        if self.limits.calls_per_run == Some(0) {
            return Err(("limits.calls_per_run", "must be at least 1".into()));
        }
        if self.limits.parallel_runs == Some(0) {
            return Err(("limits.parallel_runs", "must be at least 1".into()));
        }
        for (key, v) in [
            ("prices.input", self.prices.input),
            ("prices.output", self.prices.output),
            ("prices.cache_read", self.prices.cache_read),
            ("prices.cache_write", self.prices.cache_write),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err((key, format!("must be a number >= 0, found {v}")));
            }
        }
        self.check_latency()?;
        if let Some(e) = &self.effort {
            if self.effort_field.is_none() && self.provider == Provider::OpenAi {
                return Err((
                    "effort",
                    format!("effort \"{e}\" needs effort_field (the request field that carries it)"),
                ));
            }
        }
        Ok(())
    }

    /// `[latency]`: numbers >= 0.
    fn check_latency(&self) -> Result<(), (&'static str, String)> {
        let Some(m) = &self.latency else { return Ok(()) };
        for (key, v) in [
            ("latency.call_s", m.call_s),
            ("latency.input_token_s", m.input_token_s),
            ("latency.output_token_s", m.output_token_s),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err((key, format!("must be a number >= 0, found {v}")));
            }
        }
        Ok(())
    }

    /// The base URL, or the provider's hosted API.
    pub fn base_url(&self) -> String {
        let default = match self.provider {
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::OpenAi | Provider::Scripted => "https://api.openai.com/v1",
        };
        self.base_url.as_deref().unwrap_or(default).trim_end_matches('/').to_string()
    }

    /// The service name of the call gate: `limits.service`, else the base URL.
    pub fn service(&self) -> String {
        self.limits.service.clone().unwrap_or_else(|| self.base_url())
    }

    /// The key from the environment: `Ok(None)` when the file names no variable, an error when
    /// it names one that is unset or empty (checked before any run starts).
    pub fn api_key(&self) -> Result<Option<String>, String> {
        let Some(var) = &self.api_key_env else { return Ok(None) };
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(Some(v)),
            _ => Err(format!(
                "the model file names api_key_env = \"{var}\" but the environment variable {var} is not set"
            )),
        }
    }

    /// The USD of a usage at the file's prices.
    pub fn usd(&self, u: &crate::planners::interface::Usage) -> f64 {
        let p = &self.prices;
        (u.input_tokens as f64 * p.input
            + u.output_tokens as f64 * p.output
            + u.cache_read_tokens as f64 * p.cache_read
            + u.cache_write_tokens as f64 * p.cache_write)
            / 1e6
    }
}

/// The model-config folder: `ACRES_MODEL_CONFIGS` is read by the binary and passed here; the
/// default is the harness's `model_configs/`.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("model_configs")
}

/// The configurations of a folder, sorted by name (files that fail to load are returned as
/// errors in place, so `models` can list them with their problem).
pub fn list(dir: &Path) -> Vec<(String, PathBuf, Result<ModelConfig, ConfigError>)> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "toml") {
                let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let c = ModelConfig::load(&p);
                out.push((name, p, c));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Finds `--model`: a name in `dir` (`NAME.toml`), or a path to a TOML file.
pub fn resolve(name_or_path: &str, dir: &Path) -> Result<Resolved, ConfigError> {
    let as_path = Path::new(name_or_path);
    let file = if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
        as_path.to_path_buf()
    } else {
        dir.join(format!("{name_or_path}.toml"))
    };
    if !file.is_file() {
        let known = list(dir).into_iter().map(|(n, _, _)| n).collect::<Vec<_>>().join(", ");
        return Err(ConfigError::Unknown { name: name_or_path.into(), dir: dir.to_path_buf(), known });
    }
    let config = ModelConfig::load(&file)?;
    let name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(Resolved { name, file, config })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ModelConfig, String> {
        ModelConfig::parse(text, Path::new("m.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn every_shipped_file_loads() {
        let files = list(&default_dir());
        let names: Vec<&str> = files.iter().map(|(n, _, _)| n.as_str()).collect();
        for want in [
            "scripted",
            "claude-haiku-5-5-low",
            "claude-opus-5-5",
            "openai-template",
            "local-gemma",
            "local-qwen",
        ] {
            assert!(names.contains(&want), "{want} is not shipped: {names:?}");
        }
        for (n, _, c) in files {
            let c = c.unwrap_or_else(|e| panic!("{n}: {e}"));
            if c.provider != Provider::Scripted {
                assert!(!c.price_source.source.is_empty(), "{n}: [price_source] is empty");
            }
        }
    }

    #[test]
    fn tools_is_true_false_or_constrained() {
        let tools = |v: &str| {
            ModelConfig::parse(
                &format!("provider = \"openai\"\nmodel = \"m\"\n[capabilities]\ntools = {v}\n"),
                Path::new("m.toml"),
            )
            .map(|c| c.capabilities.tools)
        };
        assert_eq!(tools("true").unwrap(), ToolsMode::Native);
        assert_eq!(tools("false").unwrap(), ToolsMode::Text);
        assert_eq!(tools("\"constrained\"").unwrap(), ToolsMode::Constrained);
        let e = tools("\"json\"").unwrap_err().to_string();
        assert!(
            e.contains("capabilities.tools") && e.contains("expected true, false or \"constrained\""),
            "{e}"
        );
    }

    #[test]
    fn bad_files_name_the_key() {
        let e = parse("provider = \"openai\"\nmodel = \"m\"\n[retry]\ntries = 0\n").unwrap_err();
        assert_eq!(e, "m.toml: at retry.tries: must be at least 1");
        let e = parse("provider = \"nope\"\nmodel = \"m\"\n").unwrap_err();
        assert_eq!(
            e,
            "m.toml: at provider: unknown provider \"nope\"; expected one of openai, anthropic, scripted"
        );
        let e = parse("provider = \"openai\"\nmodel = \"m\"\ntimeout_s = \"x\"\n").unwrap_err();
        assert!(e.starts_with("m.toml: at timeout_s: invalid type"), "{e}");
        let e = parse("provider = \"openai\"\nmodel = \"m\"\nkey = \"sk-123\"\n").unwrap_err();
        assert!(e.starts_with("m.toml: at key: unknown field `key`"), "{e}");
        let e = parse("provider = \"anthropic\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\n").unwrap_err();
        assert!(e.starts_with("m.toml: at base_url:"), "{e}");
        let e = parse("provider = \"openai\"\nmodel = \"m\"\n[capabilities]\nimages = 3\n").unwrap_err();
        assert!(e.starts_with("m.toml: at capabilities.images: invalid type"), "{e}");
        let e = parse("provider = \"openai\"\nmodel = \"m\"\n[latency]\ncall_s = -1\n").unwrap_err();
        assert_eq!(e, "m.toml: at latency.call_s: must be a number >= 0, found -1");
        let e = parse("provider = \"openai\"\nmodel = \"m\"\n[latency]\ncall = 1\n").unwrap_err();
        assert!(e.starts_with("m.toml: at latency.call: unknown field `call`"), "{e}");
        let e =
            parse("provider = \"openai\"\nmodel = \"m\"\n[capabilities]\nconstrained_form = \"grammar\"\n")
                .unwrap_err();
        assert!(e.starts_with("m.toml: at capabilities.constrained_form: unknown variant `grammar`"), "{e}");
    }

    #[test]
    fn a_latency_model_charges_from_the_token_counts() {
        let c = parse(
            "provider = \"openai\"\nmodel = \"m\"\n[latency]\ncall_s = 1\ninput_token_s = 0.001\noutput_token_s = 0.02\n",
        )
        .unwrap();
        let u = crate::planners::interface::Usage {
            input_tokens: 900,
            cache_read_tokens: 100,
            output_tokens: 50,
            ..Default::default()
        };
        let s = c.latency.unwrap().of(&u);
        assert!((s - 3.0).abs() < 1e-9, "{s}");
        assert_eq!(parse("provider = \"openai\"\nmodel = \"m\"\n").unwrap().latency, None);
    }

    #[test]
    fn api_key_env_may_be_absent_and_an_unset_one_is_an_error() {
        let c = parse("provider = \"openai\"\nmodel = \"m\"\n").unwrap();
        assert_eq!(c.api_key(), Ok(None));
        let c =
            parse("provider = \"openai\"\nmodel = \"m\"\napi_key_env = \"ACRES_TEST_SURELY_UNSET_KEY\"\n")
                .unwrap();
        assert!(c.api_key().unwrap_err().contains("ACRES_TEST_SURELY_UNSET_KEY is not set"));
    }

    #[test]
    fn prices_give_usd() {
        let c = parse(
            "provider = \"openai\"\nmodel = \"m\"\n[prices]\ninput = 1.0\noutput = 5.0\ncache_read = 0.1\n",
        )
        .unwrap();
        let u = crate::planners::interface::Usage {
            input_tokens: 1_000_000,
            output_tokens: 200_000,
            cache_read_tokens: 1_000_000,
            cache_write_tokens: 0,
        };
        assert!((c.usd(&u) - 2.1).abs() < 1e-12);
    }
}
