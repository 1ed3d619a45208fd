//! What the proxy reads from the traffic it relays: the protocol of a path, the model a request
//! names, and the token counts of an answer, whole (JSON) or streamed (server-sent events), in
//! the three shapes: OpenAI chat completions, OpenAI responses, Anthropic messages. Token counts
//! are split as the model clients split them (input without the cached part; cache read; cache
//! write; output with reasoning).

use serde_json::Value;

use crate::planners::interface::Usage;

/// The protocol of a POST path, or `None` for a path the proxy relays without metering.
pub fn protocol_of(path: &str) -> Option<&'static str> {
    if path.ends_with("/chat/completions") {
        Some("openai-chat")
    } else if path.ends_with("/responses") {
        Some("openai-responses")
    } else if path.ends_with("/messages") {
        Some("anthropic")
    } else {
        None
    }
}

/// The usage object of an answer in one protocol's shape.
fn usage_of(protocol: &str, u: &Value) -> Usage {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    match protocol {
        "anthropic" => Usage {
            input_tokens: n(&u["input_tokens"]),
            output_tokens: n(&u["output_tokens"]),
            cache_read_tokens: n(&u["cache_read_input_tokens"]),
            cache_write_tokens: n(&u["cache_creation_input_tokens"]),
        },
        "openai-responses" => {
            let input = n(&u["input_tokens"]);
            let cached = n(&u["input_tokens_details"]["cached_tokens"]).min(input);
            Usage {
                input_tokens: input - cached,
                output_tokens: n(&u["output_tokens"]),
                cache_read_tokens: cached,
                cache_write_tokens: 0,
            }
        }
        _ => {
            let prompt = n(&u["prompt_tokens"]);
            let cached = n(&u["prompt_tokens_details"]["cached_tokens"]).min(prompt);
            Usage {
                input_tokens: prompt - cached,
                output_tokens: n(&u["completion_tokens"]),
                cache_read_tokens: cached,
                cache_write_tokens: 0,
            }
        }
    }
}

/// Folds an answer's bytes as they pass: a whole JSON body, or server-sent events line by line.
#[derive(Debug)]
pub struct Meter {
    protocol: &'static str,
    stream: bool,
    /// A whole body, or the part of a stream after the last newline.
    pending: Vec<u8>,
    usage: Usage,
}

impl Meter {
    /// A meter for an answer in `protocol`; `stream` when it is `text/event-stream`.
    pub fn new(protocol: &'static str, stream: bool) -> Self {
        Meter { protocol, stream, pending: Vec::new(), usage: Usage::default() }
    }

    /// Whether the answer is a stream of events.
    pub fn is_stream(&self) -> bool {
        self.stream
    }

    /// Takes the next bytes of the answer.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        if !self.stream {
            return;
        }
        while let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=i).collect();
            self.line(&line);
        }
    }

    fn line(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let Some(data) = text.trim().strip_prefix("data:") else { return };
        if let Ok(v) = serde_json::from_str::<Value>(data.trim()) {
            self.event(&v);
        }
    }

    /// One event of a stream: the usage is where each protocol puts it (the last OpenAI chat
    /// chunk; `response.completed`; Anthropic's `message_start` then `message_delta`, whose
    /// counts replace the earlier ones).
    fn event(&mut self, v: &Value) {
        match self.protocol {
            "anthropic" => {
                let u = match v["type"].as_str() {
                    Some("message_start") => &v["message"]["usage"],
                    Some("message_delta") => &v["usage"],
                    _ => return,
                };
                let got = usage_of("anthropic", u);
                // A field the event leaves out keeps the value an earlier event gave.
                let pick = |key: &str, new: u64, old: u64| if u.get(key).is_some() { new } else { old };
                let old = self.usage;
                self.usage = Usage {
                    input_tokens: pick("input_tokens", got.input_tokens, old.input_tokens),
                    output_tokens: pick("output_tokens", got.output_tokens, old.output_tokens),
                    cache_read_tokens: pick(
                        "cache_read_input_tokens",
                        got.cache_read_tokens,
                        old.cache_read_tokens,
                    ),
                    cache_write_tokens: pick(
                        "cache_creation_input_tokens",
                        got.cache_write_tokens,
                        old.cache_write_tokens,
                    ),
                };
            }
            "openai-responses" => {
                if v["type"] == "response.completed" {
                    self.usage = usage_of(self.protocol, &v["response"]["usage"]);
                }
            }
            _ => {
                if v["usage"].is_object() {
                    self.usage = usage_of(self.protocol, &v["usage"]);
                }
            }
        }
    }

    /// The token counts once the answer has ended.
    pub fn finish(mut self) -> Usage {
        if self.stream {
            let rest = std::mem::take(&mut self.pending);
            self.line(&rest);
            return self.usage;
        }
        match serde_json::from_slice::<Value>(&self.pending) {
            Ok(v) => usage_of(self.protocol, &v["usage"]),
            Err(_) => Usage::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_give_protocols() {
        assert_eq!(protocol_of("/v1/chat/completions"), Some("openai-chat"));
        assert_eq!(protocol_of("/v1/responses"), Some("openai-responses"));
        assert_eq!(protocol_of("/v1/messages"), Some("anthropic"));
        assert_eq!(protocol_of("/v1/models"), None);
    }

    #[test]
    fn whole_answers_of_each_protocol() {
        let mut m = Meter::new("openai-chat", false);
        m.feed(json!({"usage": {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 60}}}).to_string().as_bytes());
        assert_eq!(
            m.finish(),
            Usage { input_tokens: 40, output_tokens: 20, cache_read_tokens: 60, cache_write_tokens: 0 }
        );
        let mut m = Meter::new("openai-responses", false);
        m.feed(json!({"usage": {"input_tokens": 30, "output_tokens": 7, "input_tokens_details": {"cached_tokens": 10}}}).to_string().as_bytes());
        assert_eq!(
            m.finish(),
            Usage { input_tokens: 20, output_tokens: 7, cache_read_tokens: 10, cache_write_tokens: 0 }
        );
        let mut m = Meter::new("anthropic", false);
        m.feed(json!({"usage": {"input_tokens": 50, "output_tokens": 30, "cache_read_input_tokens": 7, "cache_creation_input_tokens": 3}}).to_string().as_bytes());
        assert_eq!(
            m.finish(),
            Usage { input_tokens: 50, output_tokens: 30, cache_read_tokens: 7, cache_write_tokens: 3 }
        );
    }

    #[test]
    fn streams_split_anywhere_give_the_same_counts() {
        let anthropic = [
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 12, "output_tokens": 1, "cache_read_input_tokens": 4, "cache_creation_input_tokens": 0}}}),
            json!({"type": "content_block_delta", "delta": {"text": "hi"}}),
            json!({"type": "message_delta", "usage": {"output_tokens": 9}}),
        ];
        let responses = [
            json!({"type": "response.output_text.delta", "delta": "x"}),
            json!({"type": "response.completed", "response": {"usage": {"input_tokens": 5, "output_tokens": 2}}}),
        ];
        let chat = [
            json!({"choices": [{"delta": {"content": "x"}}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 8, "completion_tokens": 3}}),
        ];
        let cases: [(&'static str, &[Value], Usage); 3] = [
            (
                "anthropic",
                &anthropic,
                Usage { input_tokens: 12, output_tokens: 9, cache_read_tokens: 4, cache_write_tokens: 0 },
            ),
            ("openai-responses", &responses, Usage { input_tokens: 5, output_tokens: 2, ..Usage::default() }),
            ("openai-chat", &chat, Usage { input_tokens: 8, output_tokens: 3, ..Usage::default() }),
        ];
        for (protocol, events, want) in cases {
            let mut text: String = events.iter().map(|e| format!("event: x\ndata: {e}\n\n")).collect();
            text.push_str("data: [DONE]\n\n");
            for split in [1, 7, text.len()] {
                let mut m = Meter::new(protocol, true);
                for chunk in text.as_bytes().chunks(split) {
                    m.feed(chunk);
                }
                assert_eq!(m.finish(), want, "{protocol}, chunks of {split}");
            }
        }
    }
}
