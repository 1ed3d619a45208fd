//! The `openai` provider: chat completions with tools, as hosted OpenAI and every compatible
//! server speak them (vLLM, llama.cpp server, Ollama, LM Studio). `base_url` ends in `/v1` as the
//! OpenAI SDK takes it; the request goes to `{base_url}/chat/completions`.
//!
//! - Pictures are `image_url` parts with a `data:image/png;base64,` URL in user messages; in tool
//!   results only when `capabilities.images_in_tool_results` says so, else they follow the tool
//!   messages in one user message.
//! - Reasoning comes back as `reasoning_content` (vLLM, DeepSeek), `reasoning` (Ollama,
//!   OpenRouter) or inline `<think>` tags; it is kept apart and never sent back.
//! - `effort_field`/`effort_map` and `max_tokens_param` shape the request for each server.

use base64::Engine;
use serde_json::{json, Map, Value};

use super::chat::{apply_settings, body_bytes, Parsed, Wire};
use super::config::{Capabilities, ConstrainedForm, ModelConfig};
use super::repair::split_think;
use crate::planners::interface::{Stop, ToolCall, ToolDef, Usage};
use crate::planners::Block;

/// The OpenAI chat-completions wire.
pub struct OpenAiWire {
    model: String,
    messages: Vec<Value>,
    tools: Vec<Value>,
    /// The schema every reply is constrained to (`tools = "constrained"`), sent in the field
    /// `[capabilities] constrained_form` names.
    format: Option<Value>,
}

impl OpenAiWire {
    /// A conversation with the system text and tools (none: the text protocol).
    pub fn new(model: &str, system: &str, tools: &[ToolDef]) -> Self {
        let tools = tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema}})
            })
            .collect();
        OpenAiWire {
            model: model.into(),
            messages: vec![json!({"role": "system", "content": system})],
            tools,
            format: None,
        }
    }
}

fn image_part(png: &[u8]) -> Value {
    let b64 = base64::engine::general_purpose::STANDARD.encode(png);
    json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{b64}")}})
}

/// User content: a plain string when it is text only, else parts.
fn user_content(parts: Vec<Value>) -> Value {
    if parts.len() == 1 && parts[0]["type"] == "text" {
        return parts[0]["text"].clone();
    }
    Value::Array(parts)
}

impl Wire for OpenAiWire {
    fn push(&mut self, parts: Vec<Block>, caps: &Capabilities) {
        let mut user: Vec<Value> = Vec::new();
        let mut tool_msgs: Vec<Value> = Vec::new();
        let mut trailing_images: Vec<Value> = Vec::new();
        for p in parts {
            match p {
                Block::Text(t) => user.push(json!({"type": "text", "text": t})),
                Block::ToolResult { call_id, content, .. } => {
                    tool_msgs.push(json!({"role": "tool", "tool_call_id": call_id, "content": content}))
                }
                Block::Image { frame, png } if !tool_msgs.is_empty() => {
                    if caps.images_in_tool_results {
                        let target = tool_msgs
                            .iter()
                            .rposition(|m| m["content"].as_str().is_some_and(|c| c.contains(frame.as_str())))
                            .unwrap_or(tool_msgs.len() - 1);
                        let m = &mut tool_msgs[target];
                        if let Some(text) = m["content"].as_str().map(String::from) {
                            m["content"] = json!([{"type": "text", "text": text}]);
                        }
                        if let Some(a) = m["content"].as_array_mut() {
                            a.push(image_part(&png));
                        }
                    } else {
                        trailing_images.push(json!({"type": "text", "text": format!("Picture {frame}:")}));
                        trailing_images.push(image_part(&png));
                    }
                }
                Block::Image { png, .. } => user.push(image_part(&png)),
            }
        }
        self.messages.extend(tool_msgs);
        user.extend(trailing_images);
        if !user.is_empty() {
            self.messages.push(json!({"role": "user", "content": user_content(user)}));
        }
    }

    fn push_assistant(&mut self, assistant: Value) {
        self.messages.push(assistant);
    }

    fn body(&self, cfg: &ModelConfig) -> Vec<u8> {
        let mut rest = json!({});
        if !self.tools.is_empty() {
            rest["tools"] = json!(self.tools);
            rest["tool_choice"] = json!("auto");
            if !cfg.capabilities.parallel_tool_calls {
                rest["parallel_tool_calls"] = json!(false);
            }
        }
        if let Some(schema) = &self.format {
            let form = cfg.capabilities.constrained_form;
            rest[form.as_str()] = match form {
                ConstrainedForm::ResponseFormat => json!({"type": "json_schema",
                    "json_schema": {"name": "turn", "strict": true, "schema": schema}}),
                ConstrainedForm::JsonSchema | ConstrainedForm::Format => schema.clone(),
            };
        }
        apply_settings(&mut rest, cfg, "max_tokens");
        if let Some(seed) = cfg.seed {
            rest["seed"] = json!(seed);
        }
        body_bytes(&self.model, None, &self.messages, rest)
    }

    fn url(&self, base_url: &str) -> String {
        format!("{base_url}/chat/completions")
    }

    fn headers(&self, key: Option<&str>) -> Vec<(String, String)> {
        key.map(|k| vec![("authorization".to_string(), format!("Bearer {k}"))]).unwrap_or_default()
    }

    fn parse(&self, body: &Value) -> Result<Parsed, String> {
        let choice = body["choices"].get(0).ok_or("no choices[0] in the reply")?;
        let msg = choice.get("message").and_then(Value::as_object).ok_or("no choices[0].message")?;
        let content = msg.get("content").and_then(Value::as_str).unwrap_or("");
        let (think, text) = split_think(content);
        let field = ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|k| msg.get(*k).and_then(Value::as_str))
            .filter(|s| !s.trim().is_empty())
            .map(String::from);
        let reasoning = field.or(think);
        let mut tool_calls = Vec::new();
        for (i, c) in msg.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let f = &c["function"];
            let name = f["name"].as_str().ok_or(format!("tool_calls[{i}].function.name is missing"))?;
            let arguments = match &f["arguments"] {
                Value::String(s) if s.trim().is_empty() => json!({}),
                Value::String(s) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
                Value::Null => json!({}),
                v => v.clone(),
            };
            let id = c["id"].as_str().map_or_else(|| format!("call_{i}"), String::from);
            tool_calls.push(ToolCall { id, name: name.into(), arguments });
        }
        let stop = match choice["finish_reason"].as_str() {
            Some("length") => Stop::MaxTokens,
            Some("tool_calls") | Some("function_call") => Stop::ToolUse,
            Some("content_filter") => Stop::Refusal,
            _ if msg.get("refusal").and_then(Value::as_str).is_some_and(|r| !r.is_empty()) => Stop::Refusal,
            _ if !tool_calls.is_empty() => Stop::ToolUse,
            _ => Stop::End,
        };
        let u = &body["usage"];
        let prompt = u["prompt_tokens"].as_u64().unwrap_or(0);
        let cached = u["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0).min(prompt);
        let reasoning_tokens = u["completion_tokens_details"]["reasoning_tokens"].as_u64().unwrap_or(0);
        let usage = Usage {
            input_tokens: prompt - cached,
            output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
            cache_read_tokens: cached,
            cache_write_tokens: 0,
        };
        // The history keeps the answer and the calls, not the reasoning.
        let mut assistant = Map::new();
        assistant.insert("role".into(), json!("assistant"));
        assistant.insert("content".into(), if content.is_empty() { Value::Null } else { json!(text) });
        if let Some(calls) = msg.get("tool_calls").filter(|c| c.as_array().is_some_and(|a| !a.is_empty())) {
            assistant.insert("tool_calls".into(), calls.clone());
        }
        Ok(Parsed {
            reasoning_hidden: reasoning.is_none() && reasoning_tokens > 0,
            reasoning,
            text,
            tool_calls,
            stop,
            usage,
            assistant: Value::Object(assistant),
        })
    }

    fn history_mut(&mut self) -> &mut Vec<Value> {
        &mut self.messages
    }

    const PICTURE_TYPE: &'static str = "image_url";

    /// The schema in the form the model file names: `response_format: {type: json_schema}`
    /// (llama.cpp, vLLM, Ollama's OpenAI-compatible endpoint and OpenAI take it), llama.cpp's
    /// `json_schema` or Ollama's `format`.
    fn constrain(&mut self, schema: Value) -> bool {
        self.format = Some(schema);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_with_reasoning_calls_and_cache() {
        let w = OpenAiWire::new("m", "sys", &[]);
        let body = json!({"choices": [{"finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "<think>hmm</think>Reading.", "reasoning_content": "the field",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"what\":\"vehicle\"}"}}]}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 60}}});
        let p = w.parse(&body).unwrap();
        assert_eq!(p.reasoning.as_deref(), Some("the field"));
        assert_eq!(p.text, "Reading.");
        assert_eq!(
            p.tool_calls,
            vec![ToolCall { id: "c1".into(), name: "read".into(), arguments: json!({"what": "vehicle"}) }]
        );
        assert_eq!(p.stop, Stop::ToolUse);
        assert_eq!(
            p.usage,
            Usage { input_tokens: 40, output_tokens: 20, cache_read_tokens: 60, cache_write_tokens: 0 }
        );
        assert!(p.assistant.get("reasoning_content").is_none());
    }

    #[test]
    fn a_cut_reply_and_hidden_reasoning() {
        let w = OpenAiWire::new("m", "sys", &[]);
        let body = json!({"choices": [{"finish_reason": "length", "message": {"role": "assistant", "content": "I will"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "completion_tokens_details": {"reasoning_tokens": 3}}});
        let p = w.parse(&body).unwrap();
        assert_eq!(p.stop, Stop::MaxTokens);
        assert!(p.reasoning_hidden);
        assert!(w.parse(&json!({"choices": []})).is_err());
    }
}
