//! `models --config NAME --probe`: the conformance probe of an OpenAI-compatible server (llama.cpp,
//! vLLM, Ollama, hosted OpenAI) as the model file configures it, run before a sweep.
//!
//! Each check sends small raw requests to `{base_url}/chat/completions` (greedy, a few output
//! tokens) and gives a verdict: `pass`, `warn` (worth knowing, the run still works) or `fail` (a
//! run with this model file would be spoiled: say why and how to fix it).
//!
//! - **tools**: a request asking for a call of `echo`, with the tool and without it. A call made
//!   passes; the same prompt token count with and without the tools means the server dropped
//!   them (llama.cpp with a chat template without tool support, or without `--jinja`).
//! - **parallel**: a request asking for two calls at once: how many came.
//! - **stream**: the tool request streamed: the last chunk's `finish_reason`.
//! - **pictures**: a 16×16 PNG: accepted, or refused with which status and message.
//! - **structured**: `response_format` `json_schema`: the reply is the object asked for.
//! - **context**: the window the server reports (llama.cpp `/props` `n_ctx`, `/v1/models`
//!   `meta.n_ctx_train`, vLLM `max_model_len`) against the file's `context_tokens`.
//! - **reasoning**: the field the reasoning came back in, if any.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::config::{ModelConfig, Provider, Resolved};
use super::http;

/// A verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// As the model file expects.
    Pass,
    /// Worth knowing; a run still works.
    Warn,
    /// A run with this model file would be spoiled.
    Fail,
}

/// One check of the probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conformance {
    /// The check's name.
    pub check: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// What was seen, and for a warning or failure the cause and the fix.
    pub detail: String,
    /// Figures of the check (token counts, statuses, windows).
    pub facts: Value,
}

/// The verdicts of a probe by check (the run row's `serving.probe`).
pub fn verdicts(checks: &[Conformance]) -> BTreeMap<String, Verdict> {
    checks.iter().map(|c| (c.check.clone(), c.verdict)).collect()
}

/// The checks whose verdict is `fail`.
pub fn failed(checks: &[Conformance]) -> Vec<&str> {
    checks.iter().filter(|c| c.verdict == Verdict::Fail).map(|c| c.check.as_str()).collect()
}

fn c(check: &str, verdict: Verdict, detail: String, facts: Value) -> Conformance {
    Conformance { check: check.into(), verdict, detail, facts }
}

struct Probe<'a> {
    cfg: &'a ModelConfig,
    url: String,
    headers: Vec<(String, String)>,
}

const ECHO_PROMPT: &str = "Call the tool echo with the word \"field\".";

fn echo_tool() -> Value {
    json!({"type": "function", "function": {"name": "echo", "description": "Repeats a word.",
        "parameters": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}}})
}

impl Probe<'_> {
    /// Sends a body; the JSON reply or the failure's status and message.
    fn post(&self, mut body: Value) -> Result<Value, (u16, String)> {
        body["model"] = json!(self.cfg.model);
        body["temperature"] = json!(0);
        if body.get("max_tokens").is_none() {
            body["max_tokens"] = json!(64);
        }
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        let timeout = self.cfg.call_timeout_s.unwrap_or(60.0).min(self.cfg.timeout_s);
        match http::send(reqwest::Method::POST, &self.url, &self.headers, Some(bytes), timeout) {
            Ok(a) => {
                serde_json::from_slice(&a.body).map_err(|e| (200, format!("the reply is not JSON: {e}")))
            }
            Err(http::TryFailure::Status { status, body, .. }) => Err((status, body)),
            Err(f) => Err((0, f.message())),
        }
    }

    fn messages(prompt: &str) -> Value {
        json!([{"role": "system", "content": "You are a conformance test. Be brief."}, {"role": "user", "content": prompt}])
    }
}

fn calls(v: &Value) -> Vec<Value> {
    v["choices"][0]["message"]["tool_calls"].as_array().cloned().unwrap_or_default()
}

fn prompt_tokens(v: &Value) -> Option<u64> {
    v["usage"]["prompt_tokens"].as_u64()
}

/// Runs the probe against an OpenAI-compatible server.
pub fn probe(r: &Resolved) -> Vec<Conformance> {
    let cfg = &r.config;
    if cfg.provider != Provider::OpenAi {
        return vec![c(
            "provider",
            Verdict::Warn,
            format!("provider {}: the conformance probe checks OpenAI-compatible servers only", cfg.provider),
            json!({}),
        )];
    }
    let mut headers = Vec::new();
    match cfg.api_key() {
        Ok(Some(k)) => headers.push(("authorization".to_string(), format!("Bearer {k}"))),
        Ok(None) => {}
        Err(e) => return vec![c("key", Verdict::Fail, e, json!({}))],
    }
    let p = Probe { cfg, url: format!("{}/chat/completions", cfg.base_url()), headers };
    let mut out = vec![tools(&p), parallel(&p), stream(&p), pictures(&p), structured(&p), context(&p)];
    out.push(reasoning(&p));
    out
}

fn tools(p: &Probe) -> Conformance {
    let with = p.post(
        json!({"messages": Probe::messages(ECHO_PROMPT), "tools": [echo_tool()], "tool_choice": "auto"}),
    );
    let without = p.post(json!({"messages": Probe::messages(ECHO_PROMPT)}));
    let (with, without) = match (with, without) {
        (Ok(a), Ok(b)) => (a, b),
        (Err((s, m)), _) | (_, Err((s, m))) => {
            return c(
                "tools",
                Verdict::Fail,
                format!("the request failed: status {s}: {m}"),
                json!({"status": s}),
            )
        }
    };
    let (tw, tn) = (prompt_tokens(&with), prompt_tokens(&without));
    let made = calls(&with).iter().any(|c| c["function"]["name"] == "echo");
    let facts =
        json!({"prompt_tokens_with_tools": tw, "prompt_tokens_without_tools": tn, "tool_call_made": made});
    let native = cfg_native(p.cfg);
    if made {
        return c(
            "tools",
            Verdict::Pass,
            format!("a call of echo made; prompt {tw:?} tokens with the tools, {tn:?} without"),
            facts,
        );
    }
    if tw.is_some() && tw == tn {
        let detail = format!(
            "the server dropped the tools: the prompt had {} tokens with and without them. Cause: the chat \
             template has no tool support (llama.cpp: /props says chat_format Content-only or supports_tools \
             false), or llama-server runs without --jinja. Fixes: serve a template with tool support \
             (llama-server --jinja, --chat-template-file), or set [capabilities] tools = false (tools as text)",
            tw.unwrap_or(0)
        );
        return c("tools", if native { Verdict::Fail } else { Verdict::Warn }, detail, facts);
    }
    c(
        "tools",
        Verdict::Warn,
        format!("the tools reached the model ({tw:?} tokens with, {tn:?} without) but it made no call"),
        facts,
    )
}

fn cfg_native(cfg: &ModelConfig) -> bool {
    cfg.capabilities.tools == super::config::ToolsMode::Native
}

fn parallel(p: &Probe) -> Conformance {
    let prompt = "Call the tool echo twice at once: with the word \"field\" and with the word \"road\".";
    match p.post(json!({"messages": Probe::messages(prompt), "tools": [echo_tool()], "max_tokens": 128})) {
        Ok(v) => {
            let n = calls(&v).len();
            let verdict =
                if n >= 2 || !p.cfg.capabilities.parallel_tool_calls { Verdict::Pass } else { Verdict::Warn };
            c("parallel", verdict, format!("{n} call(s) in one reply"), json!({"calls": n}))
        }
        Err((s, m)) => c("parallel", Verdict::Warn, format!("status {s}: {m}"), json!({"status": s})),
    }
}

fn stream(p: &Probe) -> Conformance {
    let body = json!({"model": p.cfg.model, "temperature": 0, "max_tokens": 64, "stream": true,
        "messages": Probe::messages(ECHO_PROMPT), "tools": [echo_tool()]});
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    match http::send(reqwest::Method::POST, &p.url, &p.headers, Some(bytes), p.cfg.timeout_s.min(60.0)) {
        Ok(a) => {
            let text = String::from_utf8_lossy(&a.body);
            let finish = text
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .filter_map(|d| serde_json::from_str::<Value>(d).ok())
                .filter_map(|v| v["choices"][0]["finish_reason"].as_str().map(String::from))
                .next_back();
            match finish {
                Some(f) => {
                    c("stream", Verdict::Pass, format!("finish_reason {f}"), json!({"finish_reason": f}))
                }
                None => c("stream", Verdict::Warn, "no finish_reason in the stream".into(), json!({})),
            }
        }
        Err(f) => c("stream", Verdict::Warn, f.message(), json!({})),
    }
}

/// A 16×16 grey PNG.
fn tiny_png() -> Vec<u8> {
    let mut pic = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut pic, 16, 16);
        enc.set_color(png::ColorType::Grayscale);
        if let Ok(mut w) = enc.write_header() {
            let _ = w.write_image_data(&[128u8; 256]);
        }
    }
    pic
}

fn pictures(p: &Probe) -> Conformance {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(tiny_png());
    let msgs = json!([{"role": "user", "content": [
        {"type": "text", "text": "What colour is this picture? One word."},
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{b64}")}}]}]);
    let wants = p.cfg.capabilities.images;
    match p.post(json!({"messages": msgs, "max_tokens": 16})) {
        Ok(_) => c("pictures", Verdict::Pass, "accepted".into(), json!({"accepted": true})),
        Err((s, m)) => {
            let named = super::chat::names_pictures(&m);
            let detail = format!(
                "refused: status {s}: {m}{}",
                if wants {
                    ". Every picture of a run becomes text (pictures_dropped): serve a model with its \
                     projector (llama-server --mmproj) or set [capabilities] images = false"
                } else {
                    ""
                }
            );
            let verdict = if wants { Verdict::Fail } else { Verdict::Pass };
            c("pictures", verdict, detail, json!({"accepted": false, "status": s, "names_pictures": named}))
        }
    }
}

fn structured(p: &Probe) -> Conformance {
    let schema = json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"], "additionalProperties": false});
    let body = json!({"messages": Probe::messages("Give the word \"field\" as JSON."),
        "response_format": {"type": "json_schema", "json_schema": {"name": "word", "strict": true, "schema": schema}}});
    match p.post(body) {
        Ok(v) => {
            let text = v["choices"][0]["message"]["content"].as_str().unwrap_or("");
            let ok = serde_json::from_str::<Value>(text).ok().is_some_and(|o| o["word"].is_string());
            let verdict = if ok { Verdict::Pass } else { Verdict::Warn };
            c(
                "structured",
                verdict,
                format!("response_format json_schema: {text:?}"),
                json!({"supported": ok}),
            )
        }
        Err((s, m)) => {
            c("structured", Verdict::Warn, format!("status {s}: {m}"), json!({"supported": false}))
        }
    }
}

/// The server's window: llama.cpp `/props`, then `/v1/models` (vLLM `max_model_len`, llama.cpp
/// `meta.n_ctx_train`).
pub fn server_window(cfg: &ModelConfig, headers: &[(String, String)]) -> Option<(u64, String)> {
    let base = cfg.base_url();
    let root = base.trim_end_matches('/').trim_end_matches("/v1");
    let get = |url: &str| -> Option<Value> {
        let a = http::send(reqwest::Method::GET, url, headers, None, 10.0).ok()?;
        serde_json::from_slice(&a.body).ok()
    };
    if let Some(v) = get(&format!("{root}/props")) {
        let n = v["default_generation_settings"]["n_ctx"].as_u64().or_else(|| v["n_ctx"].as_u64());
        if let Some(n) = n {
            return Some((n, "/props n_ctx".into()));
        }
    }
    let v = get(&format!("{base}/models"))?;
    let m = v["data"].as_array()?.iter().find(|m| m["id"] == json!(cfg.model)).or(v["data"].get(0))?;
    if let Some(n) = m["max_model_len"].as_u64() {
        return Some((n, "/v1/models max_model_len".into()));
    }
    m["meta"]["n_ctx_train"].as_u64().map(|n| (n, "/v1/models meta.n_ctx_train".into()))
}

fn context(p: &Probe) -> Conformance {
    let window = server_window(p.cfg, &p.headers);
    let ours = p.cfg.context_tokens;
    let facts = json!({"server": window.as_ref().map(|w| w.0), "source": window.as_ref().map(|w| w.1.clone()), "context_tokens": ours});
    match (window, ours) {
        (Some((n, src)), Some(t)) if t > n => c(
            "context",
            Verdict::Fail,
            format!("context_tokens {t} is past the server's window {n} ({src}): long runs will fail; set context_tokens = {n}"),
            facts,
        ),
        (Some((n, src)), Some(t)) => {
            c("context", Verdict::Pass, format!("server {n} ({src}), context_tokens {t}"), facts)
        }
        (Some((n, src)), None) => c(
            "context",
            Verdict::Warn,
            format!("server {n} ({src}); the model file sets no context_tokens: set context_tokens = {n} to keep long runs inside it"),
            facts,
        ),
        (None, _) => c("context", Verdict::Warn, "the server reports no window".into(), facts),
    }
}

fn reasoning(p: &Probe) -> Conformance {
    match p.post(json!({"messages": Probe::messages("Answer with the single word: ready")})) {
        Ok(v) => {
            let m = &v["choices"][0]["message"];
            let field = ["reasoning_content", "reasoning"]
                .into_iter()
                .find(|k| m[*k].as_str().is_some_and(|s| !s.is_empty()));
            let detail = match field {
                Some(f) => format!("reasoning in {f}"),
                None => "no reasoning field".into(),
            };
            c("reasoning", Verdict::Pass, detail, json!({"field": field}))
        }
        Err((s, m)) => c(
            "reasoning",
            Verdict::Fail,
            format!("a plain request failed: status {s}: {m}"),
            json!({"status": s}),
        ),
    }
}

/// The table of verdicts, one line a check.
pub fn table(checks: &[Conformance]) -> String {
    let mut s = format!("{:<11} {:<7} detail\n", "check", "verdict");
    for k in checks {
        let v = match k.verdict {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
        };
        s.push_str(&format!("{:<11} {:<7} {}\n", k.check, v, k.detail));
    }
    s
}
