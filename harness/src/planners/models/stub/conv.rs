//! The stub's conversations: which turn each one is at, its faults, and the scripted planner
//! that plays the model when the script says so.
//!
//! A conversation is known by its first two messages (the system text and the first user
//! message), so concurrent runs of different scenarios each follow the script from its start.
//! The player sees only the new messages of each request (those after the last assistant
//! message), as the harness's sessions do. Without native tools (the text protocol) it writes
//! one call per reply as a JSON object and answers the others of the same step in the next
//! replies.

use std::collections::{HashMap, VecDeque};

use serde_json::{json, Value};

use super::script::{Fault, Script, Then, Turn};
use crate::planners::interface::{Stop, ToolCall};
use crate::planners::scripted::ScriptedSession;
use crate::planners::{Block, CallCtx, Session};

/// What the stub answers, in neutral form.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The text.
    pub text: String,
    /// Reasoning text.
    pub reasoning: Option<String>,
    /// Native tool calls.
    pub calls: Vec<ToolCall>,
    /// The stop reason.
    pub stop: Stop,
    /// Token counts to report (input, output), if the script sets them.
    pub usage: Option<(u64, u64)>,
}

/// What one request gets.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// An answer, after a wait, s.
    Answer(Answer, f64),
    /// An error status with an optional `Retry-After`.
    Status(u16, Option<f64>),
    /// Close the connection.
    Drop,
    /// A body that is not JSON.
    Malformed,
    /// Pictures are not supported, in the form of a server (`stub`, `llama.cpp`, `vllm`).
    RefusePictures(String),
    /// The prompt is past the window: (its tokens, the window).
    Context(u64, u64),
}

/// What the stub read from a request, in neutral form.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The conversation's key (its first two messages).
    pub key: String,
    /// The new blocks (after the last assistant message).
    pub blocks: Vec<Block>,
    /// The request carries pictures.
    pub has_pictures: bool,
    /// The request declares native tools.
    pub native_tools: bool,
    /// Tool names declared (native) — for the player's session.
    pub tool_names: Vec<String>,
    /// The size of the history (messages and content parts): it only grows within a session,
    /// so a smaller one is a new session with the same first messages.
    pub size: usize,
    /// The first wake-up message of the whole history (the start), for a player that joins
    /// after scripted turns.
    pub first_wake: Option<String>,
    /// The prompt's tokens as the stub counts them.
    pub tokens: u64,
    /// The harness left earlier exchanges out (the history may shrink within a session).
    pub trimmed: bool,
    /// The request asks for a schema-constrained reply (`response_format` `json_schema`): the
    /// player answers with one JSON object, a call or `{"text"}`.
    pub constrained: bool,
}

#[derive(Default)]
struct Conv {
    turn: usize,
    faults_done: u32,
    player: Option<ScriptedSession>,
    /// Calls of the player not yet written (text protocol: one per reply).
    queued: VecDeque<ToolCall>,
    /// Results collected while the queue is answered.
    collected: Vec<Block>,
    n: u64,
    last_size: usize,
}

/// Every conversation of a stub server.
pub struct Conversations {
    script: Script,
    convs: HashMap<String, Conv>,
}

impl Conversations {
    /// Conversations that follow `script`.
    pub fn new(script: Script) -> Self {
        Conversations { script, convs: HashMap::new() }
    }

    /// What one request gets.
    pub fn next(&mut self, req: Request) -> Action {
        let delay = self.script.delay_s;
        let then = self.script.then;
        let conv = self.convs.entry(req.key.clone()).or_default();
        if req.size < conv.last_size && !req.trimmed {
            // A new session with the same first messages (the same scenario run again).
            *conv = Conv::default();
        }
        conv.last_size = req.size;
        if let Some(n_ctx) = self.script.n_ctx {
            if req.tokens > n_ctx {
                return Action::Context(req.tokens, n_ctx);
            }
        }
        let turn = self.script.turns.get(conv.turn).cloned();
        let Some(turn) = turn else {
            let a = play(conv, &req, then);
            return Action::Answer(if req.constrained { as_object(a) } else { a }, delay);
        };
        if let Some(fault) = turn.fault {
            let applies = fault != Fault::RefusePictures || req.has_pictures;
            if applies && conv.faults_done < turn.times.unwrap_or(1) {
                conv.faults_done += 1;
                match fault {
                    Fault::Status => return Action::Status(turn.status.unwrap_or(500), turn.retry_after_s),
                    Fault::Drop => return Action::Drop,
                    Fault::Malformed => {
                        conv.advance();
                        return Action::Malformed;
                    }
                    Fault::RefusePictures => {
                        return Action::RefusePictures(turn.server.clone().unwrap_or_else(|| "stub".into()))
                    }
                    Fault::Context => return Action::Context(req.tokens, req.tokens.saturating_sub(1)),
                    Fault::Delay => {
                        conv.advance();
                        let a = answer_of(conv, &turn, &req, then);
                        return Action::Answer(a, delay + turn.delay_s.unwrap_or(0.0));
                    }
                }
            }
        }
        conv.advance();
        Action::Answer(answer_of(conv, &turn, &req, then), delay)
    }
}

impl Conv {
    fn advance(&mut self) {
        self.turn += 1;
        self.faults_done = 0;
    }
}

fn answer_of(conv: &mut Conv, turn: &Turn, req: &Request, then: Then) -> Answer {
    if !turn.has_answer() {
        return play(conv, req, then);
    }
    let calls: Vec<ToolCall> = turn
        .tool_calls
        .iter()
        .flatten()
        .map(|c| {
            conv.n += 1;
            ToolCall { id: format!("call_s{}", conv.n), name: c.name.clone(), arguments: c.arguments.clone() }
        })
        .collect();
    let stop = match turn.stop.as_deref() {
        Some("max_tokens") => Stop::MaxTokens,
        Some("refusal") => Stop::Refusal,
        Some("end") => Stop::End,
        Some("tool_use") => Stop::ToolUse,
        _ if !calls.is_empty() => Stop::ToolUse,
        _ => Stop::End,
    };
    Answer {
        text: if turn.empty { String::new() } else { turn.content.clone().unwrap_or_default() },
        reasoning: turn.reasoning.clone(),
        calls,
        stop,
        usage: turn.usage.map(|u| (u.input, u.output)),
    }
}

/// The `then` player's answer.
fn play(conv: &mut Conv, req: &Request, then: Then) -> Answer {
    let done =
        Answer { text: "Done.".into(), reasoning: None, calls: Vec::new(), stop: Stop::End, usage: None };
    if then == Then::Done {
        return done;
    }
    // Text protocol: answer the queued calls of the player's last step first.
    conv.collected.extend(req.blocks.iter().filter(|b| matches!(b, Block::ToolResult { .. })).cloned());
    if let Some(c) = conv.queued.pop_front() {
        return as_text(c);
    }
    let mut blocks: Vec<Block> =
        req.blocks.iter().filter(|b| !matches!(b, Block::ToolResult { .. })).cloned().collect();
    blocks.splice(0..0, std::mem::take(&mut conv.collected));
    if conv.player.is_none() {
        // A player that joins after scripted turns (or failed calls) starts from the start.
        if let Some(w) = &req.first_wake {
            blocks = vec![Block::Text(w.clone())];
        }
    }
    let player = conv.player.get_or_insert_with(|| {
        let tools: Vec<crate::planners::interface::ToolDef> = req
            .tool_names
            .iter()
            .map(|n| crate::planners::interface::ToolDef {
                name: n.clone(),
                description: String::new(),
                input_schema: json!({}),
            })
            .collect();
        ScriptedSession::new(0.0, &tools)
    });
    let mut report = |_| {};
    let reply = match player.send(&blocks, &mut CallCtx { limit_s: f64::INFINITY, report: &mut report }) {
        Ok(r) => r,
        Err(_) => return done,
    };
    if req.native_tools || reply.tool_calls.is_empty() {
        return Answer {
            text: reply.text,
            reasoning: None,
            calls: reply.tool_calls,
            stop: reply.stop,
            usage: None,
        };
    }
    let mut calls: VecDeque<ToolCall> = reply.tool_calls.into();
    let first = calls.pop_front().expect("one call at least");
    conv.queued = calls;
    as_text(first)
}

/// A player's answer as the constrained protocol's one JSON object.
fn as_object(a: Answer) -> Answer {
    let text = match a.calls.first() {
        Some(c) => json!({"tool": c.name, "arguments": c.arguments}).to_string(),
        None if a.text.contains("```json") => {
            // A call the text protocol wrote: the object inside the fence.
            let inner =
                a.text.split("```json\n").nth(1).and_then(|r| r.split("\n```").next()).unwrap_or("{}");
            let v: Value = serde_json::from_str(inner).unwrap_or_default();
            json!({"tool": v["name"], "arguments": v["arguments"]}).to_string()
        }
        None => json!({"text": a.text}).to_string(),
    };
    Answer { text, calls: Vec::new(), stop: Stop::End, ..a }
}

fn as_text(c: ToolCall) -> Answer {
    let text = format!(
        "I will call {}.\n```json\n{}\n```",
        c.name,
        json!({"name": c.name, "arguments": c.arguments})
    );
    Answer { text, reasoning: None, calls: Vec::new(), stop: Stop::End, usage: None }
}

/// The size of a message list: its messages and their content parts.
pub fn history_size(msgs: &[Value]) -> usize {
    msgs.iter().map(|m| 1 + m["content"].as_array().map_or(0, Vec::len)).sum()
}

/// The text after `Tool result for call ID:` in a text-protocol result, as a tool result block.
pub fn text_result(text: &str) -> Option<Block> {
    let rest = text.strip_prefix("Tool result for call ")?;
    let (id, content) = rest.split_once(":\n")?;
    Some(Block::ToolResult { call_id: id.to_string(), content: content.to_string(), is_error: false })
}

/// The text of a JSON content (a string, or parts with `text`).
pub fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}
