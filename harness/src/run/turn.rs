//! A wake-up: the tool loop with the planner, every limit of a wake-up, and the charging of each
//! call's time on the mission clock.

use serde_json::json;

use super::wake::Wake;
use super::Loop;
use crate::planner::Block;
use crate::run::state::wall_now;
use crate::runlog::rows::{
    Block as RowBlock, BlockKind, Mode, ModelErrorRow, ModelReplyRow, ModelSendRow, Row, Stop, ToolRow,
    WakeRow,
};

/// The reminder sent after an empty reply.
pub const REMINDER: &str =
    "Your reply had no tool call and no text. Call a tool, or end your turn with a short text.";

/// Wait before the `model_error` wake-up when no skill runs, s.
pub const MODEL_ERROR_WAKE_S: f64 = 30.0;

impl Loop<'_> {
    /// Handles one wake-up.
    pub(crate) fn wake(&mut self, w: Wake) {
        if let Some(c) = self.classical.as_mut() {
            c.on_wake(&mut self.st, &w);
            return;
        }
        if self.st.counters.wake_ups >= u64::from(self.limits.wake_ups) {
            self.end = Some("limit_wake_ups".into());
            return;
        }
        self.st.counters.wake_ups += 1;
        let n = self.st.counters.wake_ups;
        self.st.wake = n;
        let t = self.st.t();
        let message = w.message(n, t);
        let mut blocks = vec![Block::Text(message.clone())];
        let mut frame_id = None;
        if matches!(self.opts.mode, Mode::Visual | Mode::Checked) {
            if let Ok(f) = self.st.picture(crate::picture::View::Map, None) {
                frame_id = Some(f.id.clone());
                blocks.push(Block::Image { frame: f.id, png: f.png });
            }
        }
        self.st.log(Row::Wake(WakeRow {
            t,
            wall: wall_now(),
            n,
            reason: w.reason,
            message,
            frame: frame_id,
        }));
        self.turn(blocks);
    }

    fn turn(&mut self, mut blocks: Vec<Block>) {
        let mut calls_this_wake: u64 = 0;
        let mut reminders: u32 = 0;
        let mut wake_time_s = 0.0;
        let wake = self.st.wake;
        loop {
            if self.end.is_some() {
                return;
            }
            // Stop before a call that can pass a cap: the next call is estimated as the last one.
            let c = &self.st.counters;
            if c.tokens + c.last_call_tokens > self.limits.tokens || c.usd + c.last_call_usd > self.limits.usd
            {
                self.end = Some("budget".into());
                return;
            }
            let Some(session) = self.session.as_mut() else { return };
            self.st.counters.model_calls += 1;
            let call = self.st.counters.model_calls;
            let t = self.st.t();
            self.st.log(Row::ModelSend(ModelSendRow {
                t,
                wall: wall_now(),
                call,
                wake,
                blocks: row_blocks(&blocks),
            }));
            let result = session.send(&blocks);
            match result {
                Err(e) => {
                    // The world is held during a failed call: nothing is charged.
                    self.st.log(Row::ModelError(ModelErrorRow {
                        t,
                        wall: wall_now(),
                        call,
                        error: e.message.clone(),
                        latency_s: e.latency_s,
                    }));
                    self.model_failed();
                    return;
                }
                Ok(reply) => {
                    // A time limit (the call's, or what is left of the wake-up's) cuts the call:
                    // only the time that passed is charged and its tool calls do not act.
                    let limit = self.limits.call_s.min((self.limits.wake_s - wake_time_s).max(0.0));
                    let cut = reply.latency_s > limit;
                    let want = if cut { limit } else { reply.latency_s.max(0.0) };
                    let dt = self.st.world.dt_s();
                    let charge = (want / dt).round() * dt;
                    self.st.counters.charged_s += charge;
                    wake_time_s += charge;
                    self.advance(charge);
                    let usd = session_usd(self.session.as_deref(), &reply.usage);
                    let tokens = reply.usage.input_tokens + reply.usage.output_tokens;
                    self.st.counters.usd += usd;
                    self.st.counters.tokens += tokens;
                    self.st.counters.last_call_usd = usd;
                    self.st.counters.last_call_tokens = tokens;
                    if reply.reasoning.is_some() {
                        self.st.counters.reasoning_replies += 1;
                    }
                    self.st.log(Row::ModelReply(ModelReplyRow {
                        t: self.st.t(),
                        wall: wall_now(),
                        call,
                        latency_s: reply.latency_s,
                        stop: reply.stop,
                        text: reply.text.clone(),
                        reasoning: reply.reasoning.clone(),
                        tool_calls: reply.tool_calls.clone(),
                        usage: reply.usage,
                    }));
                    if cut {
                        // The wake-up ends at once; the vehicle finishes its skill.
                        self.model_failed();
                        return;
                    }
                    self.consecutive_errors = 0;
                    if self.end.is_some() {
                        return;
                    }
                    if reply.tool_calls.is_empty() {
                        if reply.text.trim().is_empty() || reply.stop == Stop::MaxTokens {
                            self.st.counters.reminders += 1;
                            reminders += 1;
                            if reminders > self.limits.reminders {
                                return;
                            }
                            blocks = vec![Block::Text(REMINDER.into())];
                            continue;
                        }
                        return;
                    }
                    let mut results = Vec::new();
                    let mut images = Vec::new();
                    for c in &reply.tool_calls {
                        if self.st.counters.tool_calls >= u64::from(self.limits.tool_calls) {
                            self.end = Some("limit_tool_calls".into());
                            return;
                        }
                        calls_this_wake += 1;
                        self.st.counters.tool_calls += 1;
                        let out = if calls_this_wake > u64::from(self.limits.tool_calls_per_wake) {
                            crate::tools::exec::ToolOutcome {
                                result: json!({"error": format!("this wake-up reached its limit of {} tool calls: end your turn with a short text", self.limits.tool_calls_per_wake)}),
                                is_error: true,
                                image: None,
                            }
                        } else {
                            crate::tools::exec::execute(&mut self.st, &self.tools, &c.name, &c.arguments)
                        };
                        let result_map = out.result.as_object().cloned().unwrap_or_default();
                        self.st.log(Row::Tool(ToolRow {
                            t: self.st.t(),
                            wall: wall_now(),
                            wake,
                            call_id: c.id.clone(),
                            name: c.name.clone(),
                            arguments: c.arguments.clone(),
                            result: result_map,
                            error: out.is_error,
                        }));
                        if self.st.truth_read.is_some() {
                            self.end = Some("truth_read".into());
                            return;
                        }
                        results.push(Block::ToolResult {
                            call_id: c.id.clone(),
                            content: out.result.to_string(),
                            is_error: out.is_error,
                        });
                        if let Some(f) = out.image {
                            images.push(Block::Image { frame: f.id, png: f.png });
                        }
                    }
                    if calls_this_wake > u64::from(self.limits.tool_calls_per_wake) + 4 {
                        // The planner ignores the per-wake limit: end the wake-up.
                        return;
                    }
                    results.extend(images);
                    blocks = results;
                    if wake_time_s >= self.limits.wake_s - 1e-9 {
                        return;
                    }
                }
            }
        }
    }
}

impl Loop<'_> {
    /// A call without a usable reply (an error, or cut by a time limit): the wake-up ends; after
    /// `model_errors` of them in a row the run ends `model_error`; otherwise, when no skill runs,
    /// the planner gets a `model_error` wake-up 30 s later.
    fn model_failed(&mut self) {
        self.st.counters.model_errors += 1;
        self.consecutive_errors += 1;
        if self.consecutive_errors >= self.limits.model_errors {
            self.end = Some("model_error".into());
        } else if self.st.world.status().skill.is_none() {
            self.model_error_at = Some(self.st.t() + MODEL_ERROR_WAKE_S);
        }
    }
}

fn session_usd(session: Option<&dyn crate::planner::Session>, usage: &crate::runlog::rows::Usage) -> f64 {
    session.map_or(0.0, |s| s.usd(usage))
}

fn row_blocks(blocks: &[Block]) -> Vec<RowBlock> {
    blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => {
                RowBlock { kind: BlockKind::Text, text: Some(t.clone()), frame: None, tool_call_id: None }
            }
            Block::Image { frame, .. } => RowBlock {
                kind: BlockKind::Image,
                text: None,
                frame: Some(frame.clone()),
                tool_call_id: None,
            },
            Block::ToolResult { call_id, content, .. } => RowBlock {
                kind: BlockKind::ToolResult,
                text: Some(content.clone()),
                frame: None,
                tool_call_id: Some(call_id.clone()),
            },
        })
        .collect()
}
