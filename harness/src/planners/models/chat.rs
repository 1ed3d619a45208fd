//! The session of a language model over HTTP, the same for every provider: it turns the loop's
//! blocks into the provider's history (through a [`Wire`]), applies the picture rules, sends the
//! request with the new-try policy and the call gate, reads the reply (native tool calls, or a
//! tool call written as text), and counts its repairs.
//!
//! The harness owns the tries: a try that fails with 429, 408, 5xx, a timeout or a lost
//! connection is sent again after `wait_s · factor^(k−1)` (or the longer `Retry-After`), at most
//! `max_wait_s`, while the waits of the call stay within `total_wait_s` and the tries within
//! `tries`. Only the answering try's latency is charged (or, with `[latency]`, the latency the
//! model file models from the reply's token counts); the world is held meanwhile. A try that
//! reaches the call's time limit is the end of the call: it is cut, and the limit is charged.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

pub use super::body::{apply_settings, body_bytes, set_path};
use super::cache::{self, CallCache, Stored};
use super::config::{Capabilities, ModelConfig, Retry};
use super::context::{self, Estimator};
use super::gate::Gate;
use super::http::{self, TryFailure};
use super::repair;
use crate::planners::interface::{Stop, ToolCall, ToolDef, Usage};
use crate::planners::{Block, CallCtx, CallEvent, ModelError, ModelErrorKind, Repairs, Reply, Session};

/// What a wire read from a 2xx body.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The answer text.
    pub text: String,
    /// The reasoning text.
    pub reasoning: Option<String>,
    /// Reasoning tokens were counted but no text came back.
    pub reasoning_hidden: bool,
    /// Native tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// Why the reply stopped.
    pub stop: Stop,
    /// Token counts.
    pub usage: Usage,
    /// The assistant turn in the provider's form, for the history.
    pub assistant: Value,
}

/// One provider's wire form: its history, request body, headers and reply.
pub trait Wire: Send {
    /// Appends new parts to the history (pictures after tool results go where the capabilities
    /// say).
    fn push(&mut self, parts: Vec<Block>, caps: &Capabilities);
    /// Appends the assistant turn of a reply.
    fn push_assistant(&mut self, assistant: Value);
    /// The request body, serialized (the history is not copied).
    fn body(&self, cfg: &ModelConfig) -> Vec<u8>;
    /// The request URL.
    fn url(&self, base_url: &str) -> String;
    /// The request headers (the key among them; never logged).
    fn headers(&self, key: Option<&str>) -> Vec<(String, String)>;
    /// Reads a 2xx body.
    fn parse(&self, body: &Value) -> Result<Parsed, String>;
    /// The history, for the picture rules (the wire's own JSON).
    fn history_mut(&mut self) -> &mut Vec<Value>;
    /// The `type` of a picture part in this wire's JSON.
    const PICTURE_TYPE: &'static str;

    /// Constrains every reply to one JSON object of `schema` (structured output); false when
    /// the wire cannot.
    fn constrain(&mut self, _schema: Value) -> bool {
        false
    }

    /// Whether a JSON part is a picture of this wire.
    fn is_picture(part: &Value) -> bool
    where
        Self: Sized,
    {
        part.get("type").and_then(Value::as_str) == Some(Self::PICTURE_TYPE)
    }
}

/// The text that stands for a dropped picture.
pub fn picture_line(frame: &str, why: &str) -> String {
    format!("[picture {frame} left out: {why}; ask with look for it again or read the numbers]")
}

/// A model session over HTTP.
pub struct ChatSession<W: Wire> {
    cfg: Arc<ModelConfig>,
    wire: W,
    key: Option<String>,
    gate: Option<Gate>,
    tool_names: Vec<String>,
    /// Frames of the pictures in the history, oldest first.
    frames: Vec<String>,
    /// The server refused pictures once: none are sent any more.
    no_pictures: bool,
    /// The last reply's calls were read from text: their results go back as text.
    text_calls: bool,
    text_call_n: u64,
    /// Tokens of the last request (input, cache read and write) and its reply.
    last_prompt_tokens: u64,
    last_output_tokens: u64,
    /// Characters of history not yet counted by a reply's usage.
    pending_chars: usize,
    pending_pictures: u64,
    /// The server's count of the last request and that request's size: the context estimate.
    est: Estimator,
    /// The size of the request in flight (text characters, pictures).
    sent: (usize, u64),
    /// The head's last message as it was before the first exchange was left out.
    head_original: Option<Value>,
    /// Exchanges left out of the history so far.
    trimmed: u64,
    /// `tools = "constrained"`: each reply is one JSON object, a call or an end-of-turn text.
    pub constrained: bool,
    repairs: Repairs,
    /// The model-call cache (`--cache`), if on.
    cache: Option<CallCache>,
}

/// The system text addition when the model has no native tool calls.
pub fn text_protocol(tools: &[ToolDef]) -> String {
    let list: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.input_schema}))
        .collect();
    format!(
        "\n\nTools: answer with exactly one JSON object {{\"name\": TOOL, \"arguments\": {{...}}}} to call a tool; \
         its result comes back in the next message. Answer without such an object to end your turn. The tools:\n{}",
        serde_json::to_string(&list).unwrap_or_default()
    )
}

impl<W: Wire> ChatSession<W> {
    /// A session over `wire` (already holding the system text and tools).
    pub fn new(
        cfg: Arc<ModelConfig>,
        wire: W,
        key: Option<String>,
        gate: Option<Gate>,
        tools: &[ToolDef],
    ) -> Self {
        let start_chars =
            serde_json::to_string(&wire_start_size(tools)).map_or(0, |s| s.len()) + cfg.model.len();
        ChatSession {
            cfg,
            wire,
            key,
            gate,
            tool_names: tools.iter().map(|t| t.name.clone()).collect(),
            frames: Vec::new(),
            no_pictures: false,
            text_calls: false,
            text_call_n: 0,
            last_prompt_tokens: 0,
            last_output_tokens: 0,
            pending_chars: start_chars,
            pending_pictures: 0,
            est: Estimator::default(),
            sent: (0, 0),
            head_original: None,
            trimmed: 0,
            constrained: false,
            repairs: Repairs::default(),
            cache: None,
        }
    }

    /// The session with a model-call cache (`None`: off).
    pub fn with_cache(mut self, cache: Option<CallCache>) -> Self {
        self.cache = cache;
        self
    }

    /// The cached reply of a request body, if the cache is on and has a parseable one.
    fn cached(&mut self, body: &[u8]) -> Option<Reply> {
        let c = self.cache.as_ref()?;
        let (k, _) = cache::key(&self.cfg, body).ok()?;
        let stored = c.get(&k)?;
        let parsed = self.wire.parse(&stored.reply).ok()?;
        Some(Reply { cached: true, ..self.reply(parsed, stored.latency_s) })
    }

    /// Stores a reply (a cache that cannot be written is said once on stderr, the run goes on).
    fn store(&self, body: &[u8], reply: &Value, latency_s: f64) {
        let Some(c) = &self.cache else { return };
        let Ok((key, parts)) = cache::key(&self.cfg, body) else { return };
        if let Err(e) = c.put(&Stored { key, parts, latency_s, reply: reply.clone() }) {
            eprintln!("acres-harness: the model-call cache: {e}");
        }
    }

    /// Why a picture cannot be sent, if it cannot.
    fn picture_refusal(&self, png: &[u8]) -> Option<String> {
        if self.no_pictures {
            return Some("the server refused pictures".into());
        }
        if !self.cfg.capabilities.images {
            return Some("this model takes no pictures".into());
        }
        if let Some(max) = self.cfg.image_max_bytes {
            if png.len() as u64 > max {
                return Some(format!("{} bytes is above image_max_bytes {max}", png.len()));
            }
        }
        if let (Some(max), Some((w, h))) = (self.cfg.image_max_px, png_size(png)) {
            if w.max(h) > max {
                return Some(format!("{w}x{h} px is above image_max_px {max}"));
            }
        }
        None
    }

    fn parts(&mut self, blocks: &[Block]) -> Vec<Block> {
        let mut parts = Vec::new();
        for b in blocks {
            match b {
                Block::Text(t) => {
                    self.pending_chars += t.len();
                    parts.push(Block::Text(t.clone()));
                }
                Block::Image { frame, png } => match self.picture_refusal(png) {
                    Some(why) => {
                        self.repairs.pictures_dropped += 1;
                        let line = picture_line(frame, &why);
                        self.pending_chars += line.len();
                        parts.push(Block::Text(line));
                    }
                    None => {
                        self.pending_pictures += 1;
                        self.frames.push(frame.clone());
                        parts.push(Block::Image { frame: frame.clone(), png: png.clone() });
                    }
                },
                Block::ToolResult { call_id, content, is_error } => {
                    self.pending_chars += content.len() + call_id.len();
                    if self.text_calls {
                        parts.push(Block::Text(format!("Tool result for call {call_id}:\n{content}")));
                    } else {
                        parts.push(Block::ToolResult {
                            call_id: call_id.clone(),
                            content: content.clone(),
                            is_error: *is_error,
                        });
                    }
                }
            }
        }
        parts
    }

    /// Replaces all but the newest `keep` pictures of the history with a line of text.
    fn keep_pictures(&mut self, keep: usize, why: &str) {
        let n = self.frames.len();
        if n <= keep {
            return;
        }
        let drop = n - keep;
        let frames: Vec<String> = self.frames.drain(..drop).collect();
        let mut k = 0;
        for msg in self.wire.history_mut().iter_mut() {
            replace_pictures(msg, &mut k, &frames, why, W::is_picture);
        }
        self.repairs.pictures_dropped += drop as u64;
    }

    fn reply(&mut self, parsed: Parsed, latency_s: f64) -> Reply {
        self.wire.push_assistant(parsed.assistant.clone());
        let u = parsed.usage;
        self.last_prompt_tokens = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens;
        self.last_output_tokens = u.output_tokens;
        self.est = Estimator {
            last_prompt_tokens: self.last_prompt_tokens,
            last_text_chars: self.sent.0,
            last_pictures: self.sent.1,
        };
        self.pending_chars = 0;
        self.pending_pictures = 0;
        let mut tool_calls = parsed.tool_calls;
        let mut text = parsed.text;
        self.text_calls = false;
        if self.constrained && tool_calls.is_empty() {
            match super::constrained::read_turn(&text, &self.tool_names) {
                Some(super::constrained::Turn::Call(name, arguments)) => {
                    self.text_call_n += 1;
                    self.text_calls = true;
                    self.repairs.constrained_calls += 1;
                    tool_calls.push(ToolCall { id: format!("call_{}", self.text_call_n), name, arguments });
                }
                Some(super::constrained::Turn::Text(t)) => text = t,
                None => {}
            }
        }
        if tool_calls.is_empty() && !self.constrained {
            let names: Vec<&str> = self.tool_names.iter().map(String::as_str).collect();
            if let Some(c) = repair::tool_call_from_text(&text, &names) {
                self.text_call_n += 1;
                self.text_calls = true;
                self.repairs.fallback_protocol += 1;
                tool_calls.push(ToolCall {
                    id: format!("text_{}", self.text_call_n),
                    name: c.name,
                    arguments: c.arguments,
                });
            }
        }
        let stop =
            if !tool_calls.is_empty() && parsed.stop == Stop::End { Stop::ToolUse } else { parsed.stop };
        // `[latency]`: the modelled latency is the one charged (and recorded), not the wall's.
        let latency_s = self.cfg.latency.map_or(latency_s, |m| m.of(&u));
        Reply {
            text,
            reasoning: parsed.reasoning,
            reasoning_hidden: parsed.reasoning_hidden,
            tool_calls,
            stop,
            usage: u,
            latency_s,
            repairs: std::mem::take(&mut self.repairs),
            cached: false,
        }
    }

    /// Adds the wake-up's blocks to the conversation and fits it to the window: a request that
    /// cannot fit is a `context` error, never sent.
    fn push_turn(&mut self, blocks: &[Block]) -> Result<(), ModelError> {
        let parts = self.parts(blocks);
        self.wire.push(parts, &self.cfg.capabilities);
        if let Some(keep) = self.cfg.keep_pictures {
            self.keep_pictures(keep as usize, &format!("keep_pictures = {keep}"));
        }
        if let Some(window) = self.cfg.context_tokens {
            if let Err(msg) = self.fit(window) {
                return Err(self.fail(ModelErrorKind::Context, msg, 0.0));
            }
        }
        Ok(())
    }

    /// The server answered: its reply read (and stored in the cache when `sent` is the body to
    /// store it under), or a malformed reply's error.
    fn answered(&mut self, a: &http::Answer, sent: Option<&[u8]>) -> Result<Reply, ModelError> {
        let value =
            serde_json::from_slice::<Value>(&a.body).map_err(|e| format!("the reply is not JSON: {e}"));
        match value.as_ref().map_err(Clone::clone).and_then(|v| self.wire.parse(v)) {
            Ok(p) => {
                if let (Some(b), Ok(v)) = (sent, &value) {
                    self.store(b, v, a.latency_s);
                }
                Ok(self.reply(p, a.latency_s))
            }
            Err(e) => Err(self.fail(ModelErrorKind::NoReply, format!("malformed reply: {e}"), 0.0)),
        }
    }

    fn fail(&mut self, kind: ModelErrorKind, message: String, latency_s: f64) -> ModelError {
        ModelError { kind, message, latency_s, repairs: std::mem::take(&mut self.repairs) }
    }

    /// Whether a failure is the server refusing the request's pictures: a 400, 413, 415 or 422
    /// (vLLM's text-only model, the stub) or a 500 (llama.cpp without a projector) whose body
    /// names pictures, while the history holds some. Any other 500 stays a transient fault.
    fn pictures_refused(&self, f: &TryFailure) -> bool {
        matches!(f, TryFailure::Status { status: 400 | 413 | 415 | 422 | 500, body, .. }
            if !self.frames.is_empty() && names_pictures(body))
    }

    /// The request as it stands: its text characters (the body without picture data) and its
    /// pictures.
    fn measure(&mut self) -> (usize, u64) {
        let body_len = self.wire.body(&self.cfg).len();
        let (n, chars) = self
            .wire
            .history_mut()
            .iter()
            .map(|m| context::pictures_in(m, W::is_picture))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        (body_len.saturating_sub(chars), n)
    }

    /// The prompt tokens the request would take, with the reply's `max_output_tokens`.
    fn need_tokens(&mut self) -> u64 {
        let (chars, pictures) = self.measure();
        self.est.tokens(chars, pictures, self.cfg.image_tokens) + u64::from(self.cfg.max_output_tokens)
    }

    /// Fits the request into `window` tokens: pictures beyond `keep_pictures` (default 1) become
    /// text, then the oldest exchanges after the head are left out, with a note in the head.
    /// Err when it still does not fit.
    fn fit(&mut self, window: u64) -> Result<(), String> {
        if self.need_tokens() <= window {
            return Ok(());
        }
        let keep = self.cfg.keep_pictures.unwrap_or(1) as usize;
        self.keep_pictures(keep, &format!("the context window of {window} tokens"));
        loop {
            let need = self.need_tokens();
            if need <= window {
                return Ok(());
            }
            let h = self.wire.history_mut();
            let head = context::head_len(h);
            let ex = context::exchanges(h, head);
            if ex.len() <= 1 || head == 0 {
                return Err(format!(
                    "the request needs about {need} tokens (with max_output_tokens {}) with every earlier \
                     exchange left out: past context_tokens {window}",
                    self.cfg.max_output_tokens
                ));
            }
            let (s, e) = ex[0];
            let p0: u64 = h[..head].iter().map(|m| context::pictures_in(m, W::is_picture).0).sum();
            let removed: Vec<Value> = h.drain(s..e).collect();
            let pr: u64 = removed.iter().map(|m| context::pictures_in(m, W::is_picture).0).sum();
            let original = self.head_original.get_or_insert_with(|| h[head - 1]["content"].clone());
            self.trimmed += 1;
            context::set_note(&mut h[head - 1], original, self.trimmed);
            let (a, b) = (p0 as usize, (p0 + pr) as usize);
            if b <= self.frames.len() {
                self.frames.drain(a..b);
            }
            self.repairs.context_trims += 1;
        }
    }
}

/// Whether an error body names pictures (image, picture, a projector, multimodal input).
pub fn names_pictures(body: &str) -> bool {
    let b = body.to_lowercase();
    ["image", "picture", "mmproj", "multimodal", "vision"].iter().any(|w| b.contains(w))
}

/// The size the system text and tools add to the first request, for the estimate.
fn wire_start_size(tools: &[ToolDef]) -> Value {
    json!(tools.iter().map(|t| json!([t.name, t.description, t.input_schema])).collect::<Vec<_>>())
}

/// The width and height of a PNG, from its IHDR.
pub fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    if png.len() < 24 || &png[1..4] != b"PNG" {
        return None;
    }
    let w = u32::from_be_bytes(png[16..20].try_into().ok()?);
    let h = u32::from_be_bytes(png[20..24].try_into().ok()?);
    Some((w, h))
}

fn replace_pictures(
    v: &mut Value,
    k: &mut usize,
    frames: &[String],
    why: &str,
    is_picture: fn(&Value) -> bool,
) {
    if *k < frames.len() && v.is_object() && is_picture(v) {
        *v = json!({"type": "text", "text": picture_line(&frames[*k], why)});
        *k += 1;
        return;
    }
    match v {
        Value::Array(items) => {
            for it in items {
                replace_pictures(it, k, frames, why, is_picture);
            }
        }
        Value::Object(o) => {
            for (_, it) in o.iter_mut() {
                replace_pictures(it, k, frames, why, is_picture);
            }
        }
        _ => {}
    }
}

/// The wait before try `k + 1` after try `k` failed: `wait_s · factor^(k−1)`, or the longer
/// `Retry-After`, at most `max_wait_s`.
pub fn wait_before_next(r: &Retry, k: u32, retry_after_s: Option<f64>) -> f64 {
    let formula = r.wait_s * r.factor.powi(k.saturating_sub(1) as i32);
    formula.max(retry_after_s.unwrap_or(0.0)).min(r.max_wait_s)
}

impl<W: Wire> Session for ChatSession<W> {
    fn send(&mut self, blocks: &[Block], ctx: &mut CallCtx) -> Result<Reply, ModelError> {
        self.push_turn(blocks)?;
        let cfg = self.cfg.clone();
        let url = self.wire.url(&cfg.base_url());
        let headers = self.wire.headers(self.key.as_deref());
        let mut waited_s = 0.0;
        let mut try_n: u32 = 1;
        loop {
            if let Some(g) = &self.gate {
                let r = g.acquire(&mut |w| {
                    (ctx.report)(CallEvent::Wait { wait_s: w, cause: "calls_per_minute".into() })
                });
                if let Err(e) = r {
                    return Err(self.fail(ModelErrorKind::Limit, format!("the call gate failed: {e}"), 0.0));
                }
            }
            self.sent = self.measure();
            let body = self.wire.body(&cfg);
            if let Some(r) = self.cached(&body) {
                return Ok(r);
            }
            let sent = self.cache.is_some().then(|| body.clone());
            let limit_bound = ctx.limit_s <= cfg.timeout_s;
            let timeout_s = ctx.limit_s.min(cfg.timeout_s);
            let failure = match http::send(reqwest::Method::POST, &url, &headers, Some(body), timeout_s) {
                Ok(a) => return self.answered(&a, sent.as_deref()),
                Err(TryFailure::Timeout) if limit_bound => {
                    let msg = format!("cut at the call's time limit of {:.1} s", ctx.limit_s);
                    return Err(self.fail(ModelErrorKind::TimeLimit, msg, ctx.limit_s));
                }
                Err(f) => f,
            };
            if let TryFailure::Status { body, .. } = &failure {
                if context::is_context_error(body) {
                    // Past the server's window: the same request would fail again.
                    let msg = format!("past the server's context window: {}", failure.message());
                    return Err(self.fail(ModelErrorKind::Context, msg, 0.0));
                }
            }
            if self.pictures_refused(&failure) && try_n < cfg.retry.tries {
                // A repair turn: the same request without pictures.
                self.no_pictures = true;
                self.keep_pictures(0, "the server refused pictures");
                try_n += 1;
                (ctx.report)(CallEvent::Retry { try_n, wait_s: 0.0, cause: "pictures refused".into() });
                continue;
            }
            if !failure.retryable() {
                return Err(self.fail(ModelErrorKind::NoReply, failure.message(), 0.0));
            }
            if try_n >= cfg.retry.tries {
                let msg = format!("no reply after {try_n} tries: {}", failure.message());
                return Err(self.fail(ModelErrorKind::NoReply, msg, 0.0));
            }
            let wait = wait_before_next(&cfg.retry, try_n, retry_after(&failure));
            if waited_s + wait > cfg.retry.total_wait_s + 1e-9 {
                let msg = format!(
                    "no reply after {try_n} tries: the next wait of {wait:.1} s would pass total_wait_s {} ({})",
                    cfg.retry.total_wait_s,
                    failure.message()
                );
                return Err(self.fail(ModelErrorKind::NoReply, msg, 0.0));
            }
            try_n += 1;
            (ctx.report)(CallEvent::Retry { try_n, wait_s: wait, cause: failure.cause() });
            std::thread::sleep(Duration::from_secs_f64(wait));
            waited_s += wait;
        }
    }

    fn usd(&self, usage: &Usage) -> f64 {
        self.cfg.usd(usage)
    }

    fn estimate(&self, blocks: &[Block]) -> Usage {
        let mut chars = self.pending_chars;
        let mut pictures = self.pending_pictures;
        for b in blocks {
            match b {
                Block::Text(t) => chars += t.len(),
                Block::ToolResult { content, call_id, .. } => chars += content.len() + call_id.len(),
                Block::Image { .. } => pictures += 1,
            }
        }
        // About three characters a token for JSON-heavy text: an estimate on the high side.
        let new_tokens = chars.div_ceil(3) as u64 + pictures * self.cfg.image_tokens;
        Usage {
            input_tokens: self.last_prompt_tokens + self.last_output_tokens + new_tokens,
            output_tokens: u64::from(self.cfg.max_output_tokens),
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        }
    }
}

fn retry_after(f: &TryFailure) -> Option<f64> {
    match f {
        TryFailure::Status { retry_after_s, .. } => *retry_after_s,
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_follow_the_formula_and_the_longer_retry_after() {
        let r = Retry::default();
        assert_eq!(wait_before_next(&r, 1, None), 2.0);
        assert_eq!(wait_before_next(&r, 2, None), 4.0);
        assert_eq!(wait_before_next(&r, 3, None), 8.0);
        assert_eq!(wait_before_next(&r, 2, Some(7.0)), 7.0);
        assert_eq!(wait_before_next(&r, 3, Some(1.0)), 8.0);
        assert_eq!(wait_before_next(&r, 9, None), 30.0);
        assert_eq!(wait_before_next(&r, 1, Some(100.0)), 30.0);
    }

    #[test]
    fn png_size_reads_the_header() {
        let mut pic = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut pic, 4, 3);
            enc.set_color(png::ColorType::Rgb);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&[0u8; 36]).unwrap();
        }
        assert_eq!(png_size(&pic), Some((4, 3)));
        assert_eq!(png_size(b"not a png at all, no"), None);
    }
}
