//! A wake-up: the tool loop with the planner, every limit of a wake-up, and the charging of each
//! call's time on the mission clock.

use acres_farm::geom::Vec2;
use serde_json::json;

use super::Loop;
use crate::clock::wall_now;
use crate::planners::wake::{Wake, WakeDetail};
use crate::planners::{Block, CallCtx, CallEvent, ModelError, Reply};
use crate::runfolder::rows::{
    Block as RowBlock, BlockKind, EndCode, Mode, ModelErrorRow, ModelReplyRow, ModelRetryRow, ModelSendRow,
    ModelWaitRow, Repairs, Row, Stop, ToolRow, WakeRow,
};
use crate::tools::picture::Inset;

/// The reminder sent after an empty reply (no tool call, no text).
pub const REMINDER: &str =
    "Your reply had no tool call and no text. Call a tool, or end your turn with a short text.";

/// The reminder sent after a reply cut at the output token limit.
pub const REMINDER_CUT: &str = "Your reply was cut at the output token limit before it ended. \
     Answer shorter: call one tool, or end your turn with a short text.";

/// The reminder sent after a reply whose text said it calls a tool (it stopped for a tool call)
/// but carried no call the harness could read.
pub const REMINDER_NO_CALL: &str = "Your reply stopped for a tool call but had no tool call, only text. \
     Call the tool with a tool call, or end your turn with a short text.";

/// The reminder that fits a reply without a tool call, if it needs one: empty, cut at the token
/// limit, or stopped for a tool call that is not there. A reply with text that ended is the end
/// of the turn.
pub fn reminder_for(reply: &Reply) -> Option<&'static str> {
    match reply.stop {
        Stop::MaxTokens => Some(REMINDER_CUT),
        _ if reply.text.trim().is_empty() => Some(REMINDER),
        Stop::ToolUse => Some(REMINDER_NO_CALL),
        _ => None,
    }
}

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
            self.end = Some(EndCode::LimitWakeUps);
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
            if let Ok(f) = self.st.picture(crate::tools::picture::View::Map, None, inset_of(&w)) {
                frame_id = Some(f.id.clone());
                blocks.push(Block::Image { frame: f.id, png: f.png });
            }
        }
        self.st.log(Row::Wake(WakeRow {
            t,
            wall: wall_now(),
            n,
            reason: w.reason(),
            message,
            frame: frame_id,
        }));
        self.turn(blocks);
        if let Some(s) = self.session.as_mut() {
            s.turn_over();
        }
    }

    fn turn(&mut self, mut blocks: Vec<Block>) {
        let mut w = WakeCalls::default();
        // The blocks to send are a reminder.
        let mut reminder = false;
        loop {
            if self.end.is_some() {
                return;
            }
            if let Some(end) = self.refused_before_call(&blocks) {
                self.end = Some(end);
                return;
            }
            let Some(result) = self.call(&blocks, w.time_s, reminder) else { return };
            let reply = match result {
                Err(e) => {
                    self.charge(e.latency_s, &mut w);
                    self.model_failed();
                    return;
                }
                Ok(reply) => reply,
            };
            // A time limit (the call's, or what is left of the wake-up's) cuts the call: only
            // the time that passed is charged and its tool calls do not act.
            let limit = self.call_limit_s(w.time_s);
            let cut = reply.latency_s > limit;
            let charged = self.charge(if cut { limit } else { reply.latency_s.max(0.0) }, &mut w);
            self.log_reply(&reply, charged, cut);
            if cut {
                // The wake-up ends at once; the vehicle finishes its skill.
                self.model_failed();
                return;
            }
            self.progress.consecutive_errors = 0;
            if self.end.is_some() {
                return;
            }
            if reply.tool_calls.is_empty() {
                let Some(words) = reminder_for(&reply) else { return };
                w.reminders += 1;
                if w.reminders > self.limits.reminders {
                    return;
                }
                blocks = vec![Block::Text(words.into())];
                reminder = true;
                continue;
            }
            reminder = false;
            let Some(results) = self.act(&reply, &mut w) else { return };
            blocks = results;
            if w.time_s >= self.limits.wake_s - 1e-9 {
                // The calls ran: their results go to a planner that waits for them.
                if let Some(s) = self.session.as_mut() {
                    s.results_of_ended_turn(&blocks);
                }
                return;
            }
        }
    }

    /// The time limit of the next call, s: `call_s`, or what is left of `wake_s`.
    fn call_limit_s(&self, wake_time_s: f64) -> f64 {
        self.limits.call_s.min((self.limits.wake_s - wake_time_s).max(0.0))
    }

    /// What a call of `seconds` costs on the mission clock: whole control steps, 0 for none.
    fn charge_of(&self, seconds: f64) -> f64 {
        if seconds <= 0.0 {
            return 0.0;
        }
        let dt = self.st.port().dt_s();
        (seconds / dt).round() * dt
    }

    /// Charges a call's time on the mission clock: the world steps that long. Returns the time
    /// charged (its row says it).
    fn charge(&mut self, seconds: f64, w: &mut WakeCalls) -> f64 {
        let charge = self.charge_of(seconds);
        if charge <= 0.0 {
            return 0.0;
        }
        self.st.counters.charged_s += charge;
        w.time_s += charge;
        self.advance(charge);
        charge
    }

    /// The end code when the next call may not be made: `limit_model_calls` at the model
    /// file's `calls_per_run`, `budget` when the call could pass a cap (its estimate: the
    /// history, the new blocks and a full reply).
    fn refused_before_call(&self, blocks: &[Block]) -> Option<EndCode> {
        let session = self.session.as_deref()?;
        let c = &self.st.counters;
        if self.opts.calls_per_run.is_some_and(|n| c.model_calls >= n) {
            return Some(EndCode::LimitModelCalls);
        }
        let est = session.estimate(blocks);
        if c.usage.total() + est.total() > self.limits.tokens || c.usd + session.usd(&est) > self.limits.usd {
            return Some(EndCode::Budget);
        }
        None
    }

    /// Makes one model call, writing `model_send` (`reminder`: the blocks are a reminder), then
    /// each `model_retry` and `model_wait` as it happens, and `model_error` for a call without a
    /// reply.
    fn call(
        &mut self,
        blocks: &[Block],
        wake_time_s: f64,
        reminder: bool,
    ) -> Option<Result<Reply, ModelError>> {
        let limit_s = self.call_limit_s(wake_time_s);
        let session = self.session.as_mut()?;
        let st = &mut self.st;
        st.counters.model_calls += 1;
        st.counters.reminders += u64::from(reminder);
        let call = st.counters.model_calls;
        let t = st.t();
        st.log(Row::ModelSend(ModelSendRow {
            t,
            wall: wall_now(),
            call,
            wake: st.wake,
            blocks: row_blocks(blocks),
            reminder,
        }));
        let mut report = |e: CallEvent| {
            let row = match e {
                CallEvent::Retry { try_n, wait_s, cause } => {
                    Row::ModelRetry(ModelRetryRow { t, wall: wall_now(), call, try_n, wait_s, cause })
                }
                CallEvent::Wait { wait_s, cause } => {
                    Row::ModelWait(ModelWaitRow { t, wall: wall_now(), wait_s, cause })
                }
            };
            st.log(row);
        };
        let result = session.send(blocks, &mut CallCtx { limit_s, report: &mut report });
        if let Err(e) = &result {
            let charged_s = Some(self.charge_of(e.latency_s));
            let st = &mut self.st;
            add_repairs(&mut st.counters, &e.repairs);
            st.log(Row::ModelError(ModelErrorRow {
                t,
                wall: wall_now(),
                call,
                kind: e.kind,
                error: e.message.clone(),
                latency_s: e.latency_s,
                repairs: e.repairs,
                charged_s,
            }));
        }
        Some(result)
    }

    /// Counts a reply's tokens, cost and repairs and writes its `model_reply` row (`charged`: the
    /// time charged for it; `cut`: it passed its time limit).
    fn log_reply(&mut self, reply: &Reply, charged: f64, cut: bool) {
        let usd = self.session.as_deref().map_or(0.0, |s| s.usd(&reply.usage));
        let c = &mut self.st.counters;
        c.usd += usd;
        c.usage += reply.usage;
        add_repairs(c, &reply.repairs);
        if reply.reasoning.is_some() {
            c.reasoning_replies += 1;
        } else if reply.reasoning_hidden {
            c.hidden_reasoning_replies += 1;
        }
        let call = c.model_calls;
        self.st.log(Row::ModelReply(ModelReplyRow {
            t: self.st.t(),
            wall: wall_now(),
            call,
            latency_s: reply.latency_s,
            stop: reply.stop,
            text: reply.text.clone(),
            reasoning: reply.reasoning.clone(),
            reasoning_hidden: reply.reasoning_hidden,
            tool_calls: reply.tool_calls.clone(),
            usage: reply.usage,
            usd,
            repairs: reply.repairs,
            cached: reply.cached,
            charged_s: Some(charged),
            cut,
        }));
    }

    /// Runs the tool calls of a reply; the results (and pictures) for the next call, or `None`
    /// when the wake-up or the run ends.
    fn act(&mut self, reply: &Reply, w: &mut WakeCalls) -> Option<Vec<Block>> {
        let wake = self.st.wake;
        let mut results = Vec::new();
        let mut images = Vec::new();
        for c in &reply.tool_calls {
            if self.st.counters.tool_calls >= u64::from(self.limits.tool_calls) {
                self.end = Some(EndCode::LimitToolCalls);
                return None;
            }
            w.tool_calls += 1;
            self.st.counters.tool_calls += 1;
            let out = if w.tool_calls > u64::from(self.limits.tool_calls_per_wake) {
                crate::tools::exec::ToolOutcome {
                    result: json!({"error": format!("this wake-up reached its limit of {} tool calls: end your turn with a short text", self.limits.tool_calls_per_wake)}),
                    is_error: true,
                    ..Default::default()
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
                code: out.code,
                schema_error: out.schema_error,
            }));
            if self.st.truth_read.is_some() {
                self.end = Some(EndCode::TruthRead);
                return None;
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
        if w.tool_calls > u64::from(self.limits.tool_calls_per_wake) + 4 {
            // The planner ignores the per-wake limit: end the wake-up.
            return None;
        }
        results.extend(images);
        Some(results)
    }
}

/// The counts of one wake-up's calls.
#[derive(Debug, Default)]
struct WakeCalls {
    /// Tool calls in this wake-up.
    tool_calls: u64,
    /// Reminders sent in this wake-up.
    reminders: u32,
    /// Call time charged in this wake-up, s.
    time_s: f64,
}

fn add_repairs(c: &mut crate::tools::state::Counters, r: &Repairs) {
    c.fallback_protocol += r.fallback_protocol;
    c.pictures_dropped += r.pictures_dropped;
    c.context_trims += r.context_trims;
    c.constrained_calls += r.constrained_calls;
}

impl Loop<'_> {
    /// A call without a usable reply (an error, or cut by a time limit): the wake-up ends; after
    /// `model_errors` of them in a row the run ends `model_error`; otherwise, when no skill runs,
    /// the planner gets a `model_error` wake-up 30 s later.
    fn model_failed(&mut self) {
        self.st.counters.model_errors += 1;
        self.progress.consecutive_errors += 1;
        if self.progress.consecutive_errors >= self.limits.model_errors {
            self.end = Some(EndCode::ModelError);
        } else if self.st.port().status_ref().skill.is_none() {
            self.due.model_error_at = Some(self.st.t() + MODEL_ERROR_WAKE_S);
        }
    }
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

/// The inset of a wake-up's picture: the cells on the route of a `returns_on_route` wake-up (or on
/// the plan's legs, or the new ones); `None` (the vehicle) for every other reason.
fn inset_of(w: &Wake) -> Option<Inset> {
    let WakeDetail::ReturnsOnRoute(r) = &w.detail else { return None };
    let plan: Vec<[f64; 2]> = r.on_plan.iter().map(|c| [c.x, c.y]).collect();
    let cells = [&r.on_route_cells, &plan, &r.new_cells].into_iter().find(|c| !c.is_empty())?;
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for c in cells {
        for k in 0..2 {
            lo[k] = lo[k].min(c[k]);
            hi[k] = hi[k].max(c[k]);
        }
    }
    let centre = Vec2::new((lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0);
    let span_m = (hi[0] - lo[0]).max(hi[1] - lo[1]) + RETURNS_INSET_MARGIN_M;
    Some(Inset { centre, span_m, m_per_px: RETURNS_INSET_M_PER_PX, title: "inset: returns on route".into() })
}

/// The margin around the cells of a `returns_on_route` inset, m (both sides together).
const RETURNS_INSET_MARGIN_M: f64 = 20.0;

/// The scale of a `returns_on_route` inset, m/px: a truck's face seen from 35 m (four returns,
/// 2.5 m) covers about 60 px.
const RETURNS_INSET_M_PER_PX: f64 = 0.25;
