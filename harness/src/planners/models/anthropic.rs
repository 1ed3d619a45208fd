//! The `anthropic` provider: the Messages API with tools. `base_url` has no `/v1`, as the
//! Anthropic SDK takes it; the request goes to `{base_url}/v1/messages` with `x-api-key` and
//! `anthropic-version`.
//!
//! - Pictures are `image` blocks with a base64 source, in user messages and inside
//!   `tool_result` blocks (the API takes both).
//! - `thinking` blocks are reasoning: logged apart, never an answer, and kept in the history as
//!   they came (with their signatures), as the API asks for tool use with thinking.
//! - Consecutive user turns (after a call without a reply) are merged into one.

use base64::Engine;
use serde_json::{json, Value};

use super::chat::{apply_settings, body_bytes, Parsed, Wire};
use super::config::{Capabilities, ModelConfig};
use crate::planners::interface::{Stop, ToolCall, ToolDef, Usage};
use crate::planners::Block;

/// The API version header value.
pub const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages wire.
pub struct AnthropicWire {
    model: String,
    system: String,
    messages: Vec<Value>,
    tools: Vec<Value>,
}

impl AnthropicWire {
    /// A conversation with the system text and tools (none: the text protocol).
    pub fn new(model: &str, system: &str, tools: &[ToolDef]) -> Self {
        let tools = tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        AnthropicWire { model: model.into(), system: system.into(), messages: Vec::new(), tools }
    }
}

fn image_block(png: &[u8]) -> Value {
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}})
}

impl Wire for AnthropicWire {
    fn push(&mut self, parts: Vec<Block>, caps: &Capabilities) {
        let mut results: Vec<Value> = Vec::new();
        let mut rest: Vec<Value> = Vec::new();
        for p in parts {
            match p {
                Block::Text(t) => rest.push(json!({"type": "text", "text": t})),
                Block::ToolResult { call_id, content, is_error } => results.push(json!({
                    "type": "tool_result", "tool_use_id": call_id,
                    "content": [{"type": "text", "text": content}], "is_error": is_error})),
                Block::Image { frame, png } if !results.is_empty() && caps.images_in_tool_results => {
                    let target = results
                        .iter()
                        .rposition(|r| {
                            r["content"][0]["text"].as_str().is_some_and(|c| c.contains(frame.as_str()))
                        })
                        .unwrap_or(results.len() - 1);
                    if let Some(a) = results[target]["content"].as_array_mut() {
                        a.push(image_block(&png));
                    }
                }
                Block::Image { frame, png } => {
                    if !results.is_empty() {
                        rest.push(json!({"type": "text", "text": format!("Picture {frame}:")}));
                    }
                    rest.push(image_block(&png));
                }
            }
        }
        // Tool results come first in the user turn that follows the tool use.
        results.extend(rest);
        if results.is_empty() {
            return;
        }
        match self.messages.last_mut() {
            Some(last) if last["role"] == "user" => {
                if let Some(a) = last["content"].as_array_mut() {
                    a.extend(results);
                }
            }
            _ => self.messages.push(json!({"role": "user", "content": results})),
        }
    }

    fn push_assistant(&mut self, assistant: Value) {
        self.messages.push(assistant);
    }

    fn body(&self, cfg: &ModelConfig) -> Vec<u8> {
        let mut rest = json!({});
        if !self.tools.is_empty() {
            rest["tools"] = json!(self.tools);
            if !cfg.capabilities.parallel_tool_calls {
                rest["tool_choice"] = json!({"type": "auto", "disable_parallel_tool_use": true});
            }
        }
        apply_settings(&mut rest, cfg, "max_tokens");
        body_bytes(&self.model, Some(&self.system), &self.messages, rest)
    }

    fn url(&self, base_url: &str) -> String {
        format!("{base_url}/v1/messages")
    }

    fn headers(&self, key: Option<&str>) -> Vec<(String, String)> {
        let mut h = vec![("anthropic-version".to_string(), API_VERSION.to_string())];
        if let Some(k) = key {
            h.push(("x-api-key".to_string(), k.to_string()));
        }
        h
    }

    fn parse(&self, body: &Value) -> Result<Parsed, String> {
        let content = body["content"].as_array().ok_or("no content array in the reply")?;
        let mut text = Vec::new();
        let mut reasoning = Vec::new();
        let mut redacted = false;
        let mut tool_calls = Vec::new();
        for (i, b) in content.iter().enumerate() {
            match b["type"].as_str() {
                Some("text") => text.push(b["text"].as_str().unwrap_or("").to_string()),
                Some("thinking") => reasoning.push(b["thinking"].as_str().unwrap_or("").to_string()),
                Some("redacted_thinking") => redacted = true,
                Some("tool_use") => {
                    let id = b["id"].as_str().ok_or(format!("content[{i}].id is missing"))?;
                    let name = b["name"].as_str().ok_or(format!("content[{i}].name is missing"))?;
                    tool_calls.push(ToolCall {
                        id: id.into(),
                        name: name.into(),
                        arguments: b["input"].clone(),
                    });
                }
                _ => {}
            }
        }
        let stop = match body["stop_reason"].as_str() {
            Some("max_tokens") => Stop::MaxTokens,
            Some("tool_use") => Stop::ToolUse,
            Some("refusal") => Stop::Refusal,
            _ => Stop::End,
        };
        let u = &body["usage"];
        let usage = Usage {
            input_tokens: u["input_tokens"].as_u64().unwrap_or(0),
            output_tokens: u["output_tokens"].as_u64().unwrap_or(0),
            cache_read_tokens: u["cache_read_input_tokens"].as_u64().unwrap_or(0),
            cache_write_tokens: u["cache_creation_input_tokens"].as_u64().unwrap_or(0),
        };
        let reasoning = reasoning.join("\n").trim().to_string();
        Ok(Parsed {
            reasoning_hidden: reasoning.is_empty() && redacted,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
            text: text.join("\n").trim().to_string(),
            tool_calls,
            stop,
            usage,
            assistant: json!({"role": "assistant", "content": content}),
        })
    }

    fn history_mut(&mut self) -> &mut Vec<Value> {
        &mut self.messages
    }

    const PICTURE_TYPE: &'static str = "image";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_is_reasoning_and_tool_use_is_a_call() {
        let w = AnthropicWire::new("m", "sys", &[]);
        let body = json!({"stop_reason": "tool_use", "content": [
            {"type": "thinking", "thinking": "the lane is clear", "signature": "sig"},
            {"type": "text", "text": "Going."},
            {"type": "tool_use", "id": "tu1", "name": "dispatch", "input": {"skill": "goto", "arguments": {"field": "F51"}}}],
            "usage": {"input_tokens": 50, "output_tokens": 30, "cache_read_input_tokens": 7, "cache_creation_input_tokens": 3}});
        let p = w.parse(&body).unwrap();
        assert_eq!(p.reasoning.as_deref(), Some("the lane is clear"));
        assert_eq!(p.text, "Going.");
        assert_eq!(p.tool_calls[0].name, "dispatch");
        assert_eq!(p.stop, Stop::ToolUse);
        assert_eq!(
            p.usage,
            Usage { input_tokens: 50, output_tokens: 30, cache_read_tokens: 7, cache_write_tokens: 3 }
        );
        // The thinking block stays in the history with its signature.
        assert_eq!(p.assistant["content"][0]["signature"], "sig");
    }

    #[test]
    fn user_turns_merge_and_results_come_first() {
        let mut w = AnthropicWire::new("m", "sys", &[]);
        let caps = Capabilities::default();
        w.push(vec![Block::Text("a".into())], &caps);
        w.push(
            vec![
                Block::Text("b".into()),
                Block::ToolResult { call_id: "x".into(), content: "{}".into(), is_error: false },
            ],
            &caps,
        );
        assert_eq!(w.messages.len(), 1);
        let c = &w.messages[0]["content"];
        assert_eq!(c[0]["text"], "a");
        assert_eq!(c[1]["type"], "tool_result");
        assert_eq!(c[2]["text"], "b");
    }
}
