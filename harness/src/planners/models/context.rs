//! Context management for small windows: the token estimate of a request, the exchanges that may
//! be left out of a history, the note that says so, and the servers' own context errors.
//!
//! A history is the wire's JSON list of messages. Its **head** is every message up to and
//! including the first user message (the system text where the wire keeps it in the list, and
//! the start wake-up with the mission): it is always kept. The messages after the head fall into
//! **exchanges**, each starting at an assistant message (its tool calls, their results, the next
//! wake-up); the last exchange holds the calls the new results answer and is always kept too.
//! Leaving out the oldest exchanges keeps every tool result next to its call, as the wires need.

use serde_json::{json, Value};

/// Characters per token assumed for text the server has not counted yet (JSON-heavy text: an
/// estimate on the high side in tokens).
pub const CHARS_PER_TOKEN: f64 = 3.0;

/// The estimate of a request's prompt tokens.
///
/// The server's own count of the last request is the base: the request's text grew (or shrank)
/// by `text_chars − last_text_chars` characters since, and its pictures by
/// `pictures − last_pictures`. New text counts at the last request's own tokens per character,
/// or [`CHARS_PER_TOKEN`] when that is fewer tokens; without a count yet, all of the text counts
/// at [`CHARS_PER_TOKEN`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Estimator {
    /// The server's prompt token count of the last request (0: none yet).
    pub last_prompt_tokens: u64,
    /// The characters of the last request's text (the body without picture data).
    pub last_text_chars: usize,
    /// The pictures of the last request.
    pub last_pictures: u64,
}

impl Estimator {
    /// The prompt tokens of a request of `text_chars` characters and `pictures` pictures of
    /// `image_tokens` each.
    pub fn tokens(&self, text_chars: usize, pictures: u64, image_tokens: u64) -> u64 {
        let floor = 1.0 / CHARS_PER_TOKEN;
        if self.last_prompt_tokens == 0 || self.last_text_chars == 0 {
            return (text_chars as f64 * floor).ceil() as u64 + pictures * image_tokens;
        }
        let last_picture_tokens = self.last_pictures * image_tokens;
        let last_text_tokens = self.last_prompt_tokens.saturating_sub(last_picture_tokens);
        let per_char = last_text_tokens as f64 / self.last_text_chars as f64;
        let delta = text_chars as f64 - self.last_text_chars as f64;
        let rate = if delta > 0.0 { per_char.max(floor) } else { per_char };
        let text = (last_text_tokens as f64 + delta * rate).max(0.0).ceil() as u64;
        text + pictures * image_tokens
    }
}

/// Whether an error body is a server's "the prompt is past the window" error: llama.cpp's
/// `exceed_context_size_error`, OpenAI's `context_length_exceeded`, vLLM's "maximum context
/// length", Anthropic's "prompt is too long".
pub fn is_context_error(body: &str) -> bool {
    let b = body.to_lowercase();
    [
        "exceed_context_size_error",
        "exceeds the available context size",
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
    ]
    .iter()
    .any(|w| b.contains(w))
}

/// The number of head messages: up to and including the first user message.
pub fn head_len(history: &[Value]) -> usize {
    history.iter().position(|m| m["role"] == "user").map_or(history.len(), |i| i + 1)
}

/// The exchanges after the head, as `[start, end)` ranges, oldest first.
pub fn exchanges(history: &[Value], head: usize) -> Vec<(usize, usize)> {
    let mut starts: Vec<usize> =
        (head..history.len()).filter(|&i| history[i]["role"] == "assistant").collect();
    if head < history.len() && starts.first() != Some(&head) {
        // Messages before the first assistant message after the head (a wake-up after a call
        // that gave no reply): an exchange of their own.
        starts.insert(0, head);
    }
    let mut out = Vec::new();
    for (k, &s) in starts.iter().enumerate() {
        let e = starts.get(k + 1).copied().unwrap_or(history.len());
        out.push((s, e));
    }
    out
}

/// The words of the note that says earlier exchanges were left out.
pub const NOTE_MARK: &str = " earlier exchange(s) of this conversation were left out";

/// The line that says how much of the conversation was left out.
pub fn note(exchanges: u64) -> String {
    format!(
        "[{exchanges}{NOTE_MARK} to fit the context window; read the state again with the tools if you need it]"
    )
}

/// `text` without the note (the text as it was before the first exchange was left out).
pub fn strip_note(text: &str) -> &str {
    match text.find(NOTE_MARK).and_then(|i| text[..i].rfind('[')) {
        Some(i) => text[..i].trim_end(),
        None => text,
    }
}

/// Writes the head's last message as `original` followed by the note for `exchanges` left out.
pub fn set_note(msg: &mut Value, original: &Value, exchanges: u64) {
    let line = note(exchanges);
    msg["content"] = match original {
        Value::String(s) => json!(format!("{s}\n\n{line}")),
        Value::Array(parts) => {
            let mut parts = parts.clone();
            parts.push(json!({"type": "text", "text": line}));
            Value::Array(parts)
        }
        _ => json!(line),
    };
}

/// Counts the parts of `v` for which `is_picture` holds, and their serialized characters.
pub fn pictures_in(v: &Value, is_picture: fn(&Value) -> bool) -> (u64, usize) {
    if v.is_object() && is_picture(v) {
        return (1, serde_json::to_string(v).map_or(0, |s| s.len()));
    }
    let mut n = (0, 0);
    let mut add = |it: &Value| {
        let (a, b) = pictures_in(it, is_picture);
        n.0 += a;
        n.1 += b;
    };
    match v {
        Value::Array(items) => items.iter().for_each(&mut add),
        Value::Object(o) => o.values().for_each(&mut add),
        _ => {}
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pic(v: &Value) -> bool {
        v["type"] == "image_url"
    }

    #[test]
    fn the_estimate_starts_from_the_servers_count() {
        let none = Estimator::default();
        assert_eq!(none.tokens(300, 1, 1000), 1100);
        // 4 chars a token last time: new text counts at 3 chars a token (the higher count).
        let e = Estimator { last_prompt_tokens: 250, last_text_chars: 1000, last_pictures: 0 };
        assert_eq!(e.tokens(1300, 0, 1000), 350);
        // Text left out counts at the server's own rate.
        assert_eq!(e.tokens(600, 0, 1000), 150);
        // Pictures are taken out of the base and added at their price.
        let e = Estimator { last_prompt_tokens: 1250, last_text_chars: 1000, last_pictures: 1 };
        assert_eq!(e.tokens(1000, 2, 1000), 2250);
    }

    #[test]
    fn the_servers_context_errors_are_known() {
        assert!(is_context_error(
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":12031,"n_ctx":8192}}"#
        ));
        assert!(is_context_error(
            r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens","type":"BadRequestError","code":400}"#
        ));
        assert!(is_context_error(r#"{"error":{"code":"context_length_exceeded"}}"#));
        assert!(!is_context_error(r#"{"error":{"message":"stub fault: status 400"}}"#));
    }

    #[test]
    fn exchanges_start_at_assistant_messages_after_the_head() {
        let h = vec![
            json!({"role": "system", "content": "s"}),
            json!({"role": "user", "content": "wake 1"}),
            json!({"role": "assistant", "content": null, "tool_calls": []}),
            json!({"role": "tool", "content": "r"}),
            json!({"role": "assistant", "content": "done"}),
            json!({"role": "user", "content": "wake 2"}),
            json!({"role": "assistant", "content": null}),
            json!({"role": "tool", "content": "r2"}),
        ];
        let head = head_len(&h);
        assert_eq!(head, 2);
        assert_eq!(exchanges(&h, head), vec![(2, 4), (4, 6), (6, 8)]);
        // A wake-up right after the head (its call gave no reply) is an exchange of its own.
        let h2 = vec![
            json!({"role": "user", "content": "w1"}),
            json!({"role": "user", "content": "w2"}),
            json!({"role": "assistant"}),
        ];
        assert_eq!(exchanges(&h2, head_len(&h2)), vec![(1, 2), (2, 3)]);
    }

    #[test]
    fn the_note_follows_the_original_content() {
        let mut m = json!({"role": "user", "content": "x"});
        set_note(&mut m, &json!("wake 1"), 2);
        assert!(m["content"].as_str().unwrap().starts_with("wake 1\n\n[2 earlier exchange(s)"));
        let parts = json!([{"type": "text", "text": "wake 1"}, {"type": "image_url", "image_url": {"url": "data:x"}}]);
        set_note(&mut m, &parts, 3);
        assert_eq!(m["content"].as_array().unwrap().len(), 3);
        assert_eq!(pictures_in(&m, pic).0, 1);
    }
}
