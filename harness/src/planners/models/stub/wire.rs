//! The stub's two wire protocols: reading a request into the neutral [`Request`], and writing an
//! [`Answer`] as an OpenAI chat completion (plain or streamed as server-sent events) or as an
//! Anthropic message.

use serde_json::{json, Value};

use super::conv::{content_text, history_size, text_result, Answer, Request};
use crate::planners::interface::Stop;
use crate::planners::Block;

/// The conversation's key: its first messages, without the note of exchanges left out (which
/// the harness adds to the first user message when it trims the history).
fn key(protocol: &str, parts: &[String]) -> String {
    let parts: Vec<&str> = parts.iter().map(|p| crate::planners::models::context::strip_note(p)).collect();
    format!("{protocol}\u{1f}{}", parts.join("\u{1f}"))
}

/// The tool names of a request: its native tools, else those the text protocol lists in the
/// system text (after `The tools:`).
fn tool_names(native: Vec<String>, system: &str) -> Vec<String> {
    if !native.is_empty() {
        return native;
    }
    let Some((_, list)) = system.split_once("The tools:\n") else { return native };
    serde_json::from_str::<Value>(list.trim())
        .ok()
        .and_then(|v| {
            v.as_array().map(|a| a.iter().filter_map(|t| t["name"].as_str().map(String::from)).collect())
        })
        .unwrap_or_default()
}

fn user_blocks(text: &str, out: &mut Vec<Block>) {
    match text_result(text) {
        Some(b) => out.push(b),
        None => out.push(Block::Text(text.to_string())),
    }
}

/// The first user text that is a wake-up message.
fn first_wake(msgs: &[Value]) -> Option<String> {
    msgs.iter().filter(|m| m["role"] == "user").find_map(|m| {
        let texts: Vec<String> = match &m["content"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => a.iter().filter_map(|p| p["text"].as_str().map(String::from)).collect(),
            _ => Vec::new(),
        };
        texts.into_iter().find(|t| t.starts_with("Wake-up"))
    })
}

/// Reads an OpenAI chat-completions request.
pub fn openai_request(body: &Value) -> Request {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let first: Vec<String> = msgs.iter().take(2).map(|m| content_text(&m["content"])).collect();
    let last_assistant = msgs.iter().rposition(|m| m["role"] == "assistant").map_or(0, |i| i + 1);
    let mut blocks = Vec::new();
    for m in &msgs[last_assistant..] {
        match m["role"].as_str() {
            Some("tool") => blocks.push(Block::ToolResult {
                call_id: m["tool_call_id"].as_str().unwrap_or("").into(),
                content: content_text(&m["content"]),
                is_error: false,
            }),
            Some("user") => match &m["content"] {
                Value::Array(parts) => {
                    for p in parts {
                        if let Some(t) = p["text"].as_str() {
                            user_blocks(t, &mut blocks);
                        }
                    }
                }
                c => user_blocks(&content_text(c), &mut blocks),
            },
            _ => {}
        }
    }
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    Request {
        key: key("openai", &first),
        blocks,
        has_pictures: body.to_string().contains("\"image_url\""),
        native_tools: !tools.is_empty(),
        tool_names: tool_names(
            tools.iter().filter_map(|t| t["function"]["name"].as_str().map(String::from)).collect(),
            &first[0],
        ),
        size: history_size(&msgs),
        first_wake: first_wake(&msgs),
        tokens: (request_len(body) / 4) as u64 + 1,
        trimmed: body.to_string().contains(crate::planners::models::context::NOTE_MARK),
        // The three forms of the constrained protocol: OpenAI's, llama.cpp's own, Ollama's own.
        constrained: body["response_format"]["type"] == "json_schema"
            || body["json_schema"].is_object()
            || body["format"].is_object(),
    }
}

/// Reads an Anthropic messages request.
pub fn anthropic_request(body: &Value) -> Request {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let mut first = vec![content_text(&body["system"])];
    // Only the first block of the first user turn: later user turns merge into it after a call
    // without a reply, and the conversation must keep its key.
    first.extend(msgs.iter().take(1).map(|m| match &m["content"] {
        Value::Array(a) => a.first().map_or(String::new(), |p| p["text"].as_str().unwrap_or("").to_string()),
        c => content_text(c),
    }));
    let last_assistant = msgs.iter().rposition(|m| m["role"] == "assistant").map_or(0, |i| i + 1);
    let mut blocks = Vec::new();
    for m in &msgs[last_assistant..] {
        let parts = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(a) => a.clone(),
            _ => Vec::new(),
        };
        for p in parts {
            match p["type"].as_str() {
                Some("text") => user_blocks(p["text"].as_str().unwrap_or(""), &mut blocks),
                Some("tool_result") => blocks.push(Block::ToolResult {
                    call_id: p["tool_use_id"].as_str().unwrap_or("").into(),
                    content: content_text(&p["content"]),
                    is_error: p["is_error"].as_bool().unwrap_or(false),
                }),
                _ => {}
            }
        }
    }
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    Request {
        key: key("anthropic", &first),
        blocks,
        has_pictures: body.to_string().contains("\"type\":\"image\""),
        native_tools: !tools.is_empty(),
        tool_names: tool_names(
            tools.iter().filter_map(|t| t["name"].as_str().map(String::from)).collect(),
            &first[0],
        ),
        size: history_size(&msgs),
        first_wake: first_wake(&msgs),
        tokens: (request_len(body) / 4) as u64 + 1,
        trimmed: body.to_string().contains(crate::planners::models::context::NOTE_MARK),
        constrained: body["response_format"]["type"] == "json_schema",
    }
}

/// Pictures count this many input tokens each, whatever their size.
pub const PICTURE_TOKENS: u64 = 1000;

/// The size of a request for its token count: the characters of its strings, without picture
/// data (base64 sources and data URLs), plus [`PICTURE_TOKENS`]·4 characters a picture.
pub fn request_len(v: &Value) -> usize {
    match v {
        Value::String(s) if s.starts_with("data:image/") => (PICTURE_TOKENS * 4) as usize,
        Value::String(s) => s.len(),
        Value::Array(a) => a.iter().map(request_len).sum(),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| {
                if k == "data" && o.get("type") == Some(&json!("base64")) {
                    (PICTURE_TOKENS * 4) as usize
                } else {
                    request_len(v)
                }
            })
            .sum(),
        _ => 1,
    }
}

/// Token counts: the script's, else about four characters a token of the request and answer.
fn usage(a: &Answer, request_len: usize) -> (u64, u64) {
    a.usage.unwrap_or_else(|| {
        let out = a.text.len()
            + a.reasoning.as_ref().map_or(0, String::len)
            + a.calls.iter().map(|c| c.arguments.to_string().len() + c.name.len()).sum::<usize>();
        ((request_len / 4) as u64 + 1, (out / 4) as u64 + 1)
    })
}

/// An OpenAI chat completion.
pub fn openai_answer(a: &Answer, model: &str, n: u64, request_len: usize) -> Value {
    let (input, output) = usage(a, request_len);
    let mut msg = json!({"role": "assistant", "content": if a.text.is_empty() && !a.calls.is_empty() { Value::Null } else { json!(a.text) }});
    if let Some(r) = &a.reasoning {
        msg["reasoning_content"] = json!(r);
    }
    if !a.calls.is_empty() {
        msg["tool_calls"] = json!(a
            .calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments.to_string()}}))
            .collect::<Vec<_>>());
    }
    let finish = match a.stop {
        Stop::MaxTokens => "length",
        Stop::Refusal => "content_filter",
        Stop::ToolUse => "tool_calls",
        Stop::End => "stop",
    };
    json!({"id": format!("chatcmpl-stub-{n}"), "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
        "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}})
}

/// The same completion as server-sent events (`stream: true`): a role chunk, the content, each
/// tool call, the finish reason, the usage when asked, and `[DONE]`.
pub fn openai_stream(a: &Answer, model: &str, n: u64, request_len: usize, include_usage: bool) -> String {
    let full = openai_answer(a, model, n, request_len);
    let id = full["id"].clone();
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    if let Some(r) = &a.reasoning {
        events.push(chunk(json!({"reasoning_content": r}), Value::Null));
    }
    if !a.text.is_empty() {
        events.push(chunk(json!({"content": a.text}), Value::Null));
    }
    for (i, c) in a.calls.iter().enumerate() {
        events.push(chunk(
            json!({"tool_calls": [{"index": i, "id": c.id, "type": "function",
                "function": {"name": c.name, "arguments": c.arguments.to_string()}}]}),
            Value::Null,
        ));
    }
    events.push(chunk(json!({}), full["choices"][0]["finish_reason"].clone()));
    if include_usage {
        events.push(json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [], "usage": full["usage"]}));
    }
    let mut out: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// An Anthropic message.
pub fn anthropic_answer(a: &Answer, model: &str, n: u64, request_len: usize) -> Value {
    let (input, output) = usage(a, request_len);
    let mut content = Vec::new();
    if let Some(r) = &a.reasoning {
        content.push(json!({"type": "thinking", "thinking": r, "signature": format!("stub-signature-{n}")}));
    }
    if !a.text.is_empty() {
        content.push(json!({"type": "text", "text": a.text}));
    }
    for c in &a.calls {
        content.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}));
    }
    let stop = match a.stop {
        Stop::MaxTokens => "max_tokens",
        Stop::Refusal => "refusal",
        Stop::ToolUse => "tool_use",
        Stop::End => "end_turn",
    };
    json!({"id": format!("msg_stub_{n}"), "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop, "stop_sequence": Value::Null,
        "usage": {"input_tokens": input, "output_tokens": output, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}})
}
