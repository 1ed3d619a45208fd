//! An external agent as the planner: a [`Session`] whose replies are the calls an agent makes
//! through a face (the MCP server, the line protocol), so an agent's run is the loop of a model's
//! run, with the same limits, checks and run folder.
//!
//! The loop's thread owns the [`AgentSession`]; a face holds an [`AgentPort`] (cheap to clone,
//! async) and hands it each call of the agent:
//!
//! - a tool call becomes a reply with that one tool call; the loop runs it and sends its result
//!   (with the picture of `look`), which answers the agent's call;
//! - `wait_for_wake` becomes a reply that ends the turn; the next wake-up's message (and map
//!   picture) answers it. When no skill runs and no timer is set, ending the turn ends the run.
//!
//! **Thinking time.** A wake-up lasts from the return of `wait_for_wake` to the next call of
//! `wait_for_wake`. The wall time from the moment an answer is handed to the agent (a wake-up, a
//! tool result) to the moment its next call reaches the harness is that call's latency: it is
//! charged on the mission clock exactly as a model call's latency is (rounded to the control step,
//! the vehicle going on meanwhile), and it is cut at the call's time limit (`call_s`, or what is
//! left of `wake_s`) like a model call: the wake-up then ends and the late call is refused. A
//! call that ran and used up what was left of `wake_s` gets its result (with `wake_up_ended`
//! saying so); the wake-up has then ended.
//!
//! **Phases.** `starting` (the start wake-up not yet taken), `turn` (the agent's turn: tools are
//! taken), `world` (the agent waits; the world runs), `ended`. A tool call outside `turn` is
//! refused at once with the phase, never queued; after the end every call answers that the run
//! has ended, with its end code.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::{oneshot, watch};

use crate::planners::interface::{ModelErrorKind, Stop, ToolCall, ToolDef, Usage};
use crate::planners::{Block, CallCtx, Client, ModelError, Reply, Session};
use crate::runfolder::rows::EndCode;

/// Where an agent's run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The run has not handed out its start wake-up yet.
    Starting,
    /// The agent's turn: tool calls are taken.
    Turn,
    /// The agent waits for a wake-up; the world runs.
    World,
    /// The run has ended.
    Ended,
}

/// What a face may show of the run at any time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentStatus {
    /// The phase.
    pub phase: Phase,
    /// Mission time, s.
    pub t_s: f64,
    /// The running skill.
    pub skill: Option<String>,
    /// Fraction of the running motion done.
    pub progress: f64,
    /// Wake-ups handed out.
    pub wake_ups: u64,
    /// The end code, once the run has ended.
    pub end: Option<EndCode>,
    /// Whether the run succeeded, once it has ended.
    pub success: Option<bool>,
}

/// A map picture handed to the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// The frame identifier (`f0003`).
    pub frame: String,
    /// The PNG.
    pub png: Arc<Vec<u8>>,
}

/// The answer to one call of the agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A tool ran: its result object, whether it failed, and a picture (`look`).
    Tool {
        /// The result object.
        result: Value,
        /// The call failed (bad arguments, refused by a check).
        is_error: bool,
        /// The picture of `look`.
        picture: Option<Picture>,
    },
    /// `wait_for_wake`: the wake-up's message and map picture.
    Wake {
        /// The message.
        message: String,
        /// The map picture (visual and checked modes).
        picture: Option<Picture>,
    },
    /// The call was not run, and why (the phase, a cut turn).
    Refused {
        /// The phase when it was refused.
        phase: Phase,
        /// Why.
        message: String,
    },
    /// The run has ended.
    Ended {
        /// The end code.
        end: EndCode,
        /// Whether the run succeeded.
        success: bool,
    },
}

impl Answer {
    /// The answer as one JSON object (the line protocol's reply; the MCP face's text).
    pub fn to_json(&self) -> Value {
        match self {
            Answer::Tool { result, is_error, picture } => {
                json!({"ok": !is_error, "result": result, "frame": picture.as_ref().map(|p| &p.frame)})
            }
            Answer::Wake { message, picture } => {
                json!({"ok": true, "wake": message, "frame": picture.as_ref().map(|p| &p.frame)})
            }
            Answer::Refused { phase, message } => json!({"ok": false, "phase": phase, "error": message}),
            Answer::Ended { end, success } => json!({"ok": false, "phase": Phase::Ended, "end": end,
                "success": success, "error": format!("the run has ended: end code {}", end.as_str())}),
        }
    }
}

/// One call of the agent on its way to the loop.
struct Action {
    /// A tool call, or `None` for `wait_for_wake`.
    tool: Option<(String, Value)>,
    /// Where the answer goes.
    answer: oneshot::Sender<Answer>,
    /// When it reached the harness.
    at: Instant,
}

/// What both sides share.
struct Shared {
    status: Mutex<AgentStatus>,
    ended: watch::Sender<Option<(EndCode, bool)>>,
}

impl Shared {
    fn set_phase(&self, phase: Phase) {
        if let Ok(mut s) = self.status.lock() {
            if s.phase != Phase::Ended {
                s.phase = phase;
            }
        }
    }
}

/// The face's side of an agent's run.
#[derive(Clone)]
pub struct AgentPort {
    actions: Sender<Action>,
    shared: Arc<Shared>,
}

/// Makes the two sides of an agent's run: the client the loop starts a session of, and the port
/// the faces call. `name` is the agent's name (run folders, the run row's model); `connect_s` is
/// how long the run waits for the agent to take its start wake-up.
pub fn agent(name: &str, connect_s: f64) -> (AgentClient, AgentPort) {
    let (tx, rx) = std::sync::mpsc::channel();
    let shared = Arc::new(Shared {
        status: Mutex::new(AgentStatus {
            phase: Phase::Starting,
            t_s: 0.0,
            skill: None,
            progress: 0.0,
            wake_ups: 0,
            end: None,
            success: None,
        }),
        ended: watch::channel(None).0,
    });
    let client = AgentClient {
        name: name.to_string(),
        connect_s,
        inner: Mutex::new(Some(rx)),
        shared: shared.clone(),
    };
    (client, AgentPort { actions: tx, shared })
}

impl AgentPort {
    /// The run's status now.
    pub fn status(&self) -> AgentStatus {
        self.shared.status.lock().map(|s| s.clone()).unwrap_or_else(|e| e.into_inner().clone())
    }

    /// What marks the run ended (held by the run's host, not by a face: the loop sees a face
    /// that has gone when every port is dropped).
    pub fn ender(&self) -> RunEnder {
        RunEnder(self.shared.clone())
    }

    /// The end once the run has ended.
    pub async fn ended(&self) -> (EndCode, bool) {
        let mut rx = self.shared.ended.subscribe();
        loop {
            if let Some(e) = *rx.borrow_and_update() {
                return e;
            }
            if rx.changed().await.is_err() {
                return (EndCode::ModelError, false);
            }
        }
    }

    fn ended_now(&self) -> Option<Answer> {
        (*self.shared.ended.borrow()).map(|(end, success)| Answer::Ended { end, success })
    }

    /// Runs one tool call (refused at once outside the agent's turn).
    pub async fn tool(&self, name: &str, arguments: Value) -> Answer {
        if let Some(a) = self.ended_now() {
            return a;
        }
        let phase = self.status().phase;
        if phase != Phase::Turn {
            let why = match phase {
                Phase::Starting => "the run has not started: call wait_for_wake for the start of the mission",
                _ => "it is not your turn (the vehicle runs): call wait_for_wake for the next wake-up",
            };
            return Answer::Refused {
                phase,
                message: format!("refused in phase {}: {why}", phase_word(phase)),
            };
        }
        self.submit(Some((name.to_string(), arguments))).await
    }

    /// Ends the agent's turn and waits for the next wake-up (or the end of the run).
    pub async fn wait_for_wake(&self) -> Answer {
        if let Some(a) = self.ended_now() {
            return a;
        }
        self.submit(None).await
    }

    async fn submit(&self, tool: Option<(String, Value)>) -> Answer {
        let (answer, rx) = oneshot::channel();
        let action = Action { tool, answer, at: Instant::now() };
        if self.actions.send(action).is_ok() {
            if let Ok(a) = rx.await {
                return a;
            }
        }
        let (end, success) = self.ended().await;
        Answer::Ended { end, success }
    }
}

/// Marks an agent's run ended.
pub struct RunEnder(Arc<Shared>);

impl RunEnder {
    /// The run is over: every call waiting and every later call answers with the end.
    pub fn set_ended(&self, end: EndCode, success: bool) {
        if let Ok(mut s) = self.0.status.lock() {
            s.phase = Phase::Ended;
            s.end = Some(end);
            s.success = Some(success);
        }
        self.0.ended.send_replace(Some((end, success)));
    }
}

/// The phase as a word (`starting`, `turn`, `world`, `ended`).
pub fn phase_word(p: Phase) -> &'static str {
    match p {
        Phase::Starting => "starting",
        Phase::Turn => "turn",
        Phase::World => "world",
        Phase::Ended => "ended",
    }
}

/// The client of an agent's run: one session, fed by the port's calls.
pub struct AgentClient {
    name: String,
    connect_s: f64,
    inner: Mutex<Option<Receiver<Action>>>,
    shared: Arc<Shared>,
}

impl Client for AgentClient {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&self, _system: &str, _tools: &[ToolDef]) -> Result<Box<dyn Session>, ModelError> {
        let rx = self.inner.lock().ok().and_then(|mut r| r.take()).ok_or_else(|| {
            ModelError::new(ModelErrorKind::Limit, "an agent's run has one session; this one was taken")
        })?;
        Ok(Box::new(AgentSession {
            rx,
            pending: None,
            delivered_at: None,
            calls: 0,
            connect_s: self.connect_s,
            shared: self.shared.clone(),
        }))
    }
}

/// The loop's side of an agent's run.
pub struct AgentSession {
    rx: Receiver<Action>,
    /// The call whose answer the loop gives next.
    pending: Option<Action>,
    /// When the last answer was handed to the agent.
    delivered_at: Option<Instant>,
    calls: u64,
    connect_s: f64,
    shared: Arc<Shared>,
}

impl AgentSession {
    fn answer_pending(&mut self, answer: Answer) {
        if let Some(a) = self.pending.take() {
            let _ = a.answer.send(answer);
            self.delivered_at = Some(Instant::now());
        }
    }

    /// Hands the results of a tool call to the agent's call.
    fn give_result(&mut self, blocks: &[Block]) {
        self.give_result_with(blocks, None);
    }

    /// As [`Self::give_result`]; with `ended`, the result object also says that the wake-up
    /// has ended (`wake_up_ended`).
    fn give_result_with(&mut self, blocks: &[Block], ended: Option<&str>) {
        let picture = blocks.iter().find_map(|b| match b {
            Block::Image { frame, png } => Some(Picture { frame: frame.clone(), png: png.clone() }),
            _ => None,
        });
        let (result, is_error) = blocks
            .iter()
            .find_map(|b| match b {
                Block::ToolResult { content, is_error, .. } => {
                    Some((serde_json::from_str(content).unwrap_or(Value::String(content.clone())), *is_error))
                }
                _ => None,
            })
            .unwrap_or((Value::Null, true));
        let result = match (ended, result) {
            (Some(note), Value::Object(mut m)) => {
                m.insert("wake_up_ended".into(), Value::from(note));
                Value::Object(m)
            }
            (_, r) => r,
        };
        self.answer_pending(Answer::Tool { result, is_error, picture });
    }

    /// Hands a wake-up to the agent's `wait_for_wake`, waiting for that call when it has not
    /// come yet (a late tool call of a cut turn is refused meanwhile).
    fn give_wake(&mut self, blocks: &[Block], limit_s: f64) -> Result<(), ModelError> {
        let message = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let picture = blocks.iter().find_map(|b| match b {
            Block::Image { frame, png } => Some(Picture { frame: frame.clone(), png: png.clone() }),
            _ => None,
        });
        if self.pending.as_ref().is_some_and(|a| a.tool.is_some()) {
            self.answer_pending(cut_answer());
        }
        let wait_s = if self.shared.status.lock().map(|s| s.wake_ups == 0).unwrap_or(true) {
            self.connect_s
        } else {
            limit_s.max(1.0)
        };
        let deadline = Instant::now() + Duration::from_secs_f64(wait_s);
        while self.pending.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(a) if a.tool.is_some() => {
                    let _ = a.answer.send(cut_answer());
                }
                Ok(a) => self.pending = Some(a),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ModelError::new(
                        ModelErrorKind::NoReply,
                        format!("the agent did not call wait_for_wake within {wait_s:.0} s"),
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(ModelError::new(ModelErrorKind::NoReply, "the agent's face has closed"))
                }
            }
        }
        if let Ok(mut s) = self.shared.status.lock() {
            s.wake_ups += 1;
        }
        self.shared.set_phase(Phase::Turn);
        self.answer_pending(Answer::Wake { message, picture });
        Ok(())
    }

    /// Waits for the agent's next call: its latency is the wall time since the last answer.
    fn next_call(&mut self, limit_s: f64) -> Result<Reply, ModelError> {
        let since = self.delivered_at.unwrap_or_else(Instant::now);
        let deadline = since + Duration::from_secs_f64(limit_s.max(0.0));
        let a = match self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(a) => a,
            Err(RecvTimeoutError::Timeout) => {
                self.shared.set_phase(Phase::World);
                return Err(ModelError {
                    kind: ModelErrorKind::TimeLimit,
                    message: format!("the agent made no call within the limit of {limit_s:.1} s"),
                    latency_s: limit_s,
                    repairs: Default::default(),
                });
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(ModelError::new(ModelErrorKind::NoReply, "the agent's face has closed"))
            }
        };
        let latency_s = a.at.saturating_duration_since(since).as_secs_f64();
        self.calls += 1;
        let reply = match &a.tool {
            Some((name, arguments)) => Reply {
                tool_calls: vec![ToolCall {
                    id: format!("agent-{}", self.calls),
                    name: name.clone(),
                    arguments: arguments.clone(),
                }],
                stop: Stop::ToolUse,
                ..Reply::text("", latency_s)
            },
            None => {
                self.shared.set_phase(Phase::World);
                Reply::text("(wait_for_wake)", latency_s)
            }
        };
        self.pending = Some(a);
        Ok(reply)
    }
}

/// What the result of a call says when the wake-up's time ran out with it.
pub const WAKE_USED_UP: &str =
    "the call ran; then the wake-up's time limit (wake_s) ran out: the wake-up has ended, call wait_for_wake";

/// The answer to a call that came after its turn was cut.
fn cut_answer() -> Answer {
    Answer::Refused {
        phase: Phase::World,
        message:
            "refused: this wake-up ended (a limit of the wake-up) before the call ran; call wait_for_wake"
                .into(),
    }
}

impl Session for AgentSession {
    fn send(&mut self, blocks: &[Block], ctx: &mut CallCtx) -> Result<Reply, ModelError> {
        if blocks.iter().any(|b| matches!(b, Block::ToolResult { .. })) {
            self.give_result(blocks);
        } else {
            self.give_wake(blocks, ctx.limit_s)?;
        }
        self.next_call(ctx.limit_s)
    }

    fn estimate(&self, _blocks: &[Block]) -> Usage {
        Usage::default()
    }

    fn observe(&mut self, t_s: f64, skill: Option<&str>, progress: f64) {
        if let Ok(mut s) = self.shared.status.lock() {
            s.t_s = t_s;
            s.skill = skill.map(str::to_string);
            s.progress = progress;
        }
    }

    fn results_of_ended_turn(&mut self, blocks: &[Block]) {
        if self.pending.as_ref().is_some_and(|a| a.tool.is_some()) {
            self.shared.set_phase(Phase::World);
            self.give_result_with(blocks, Some(WAKE_USED_UP));
        }
    }

    fn turn_over(&mut self) {
        if self.pending.as_ref().is_some_and(|a| a.tool.is_some()) {
            self.answer_pending(cut_answer());
            self.shared.set_phase(Phase::World);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_uses_up_the_wake_up_gets_its_result_and_then_the_wake_up_has_ended() {
        let rt = crate::planners::models::http::runtime();
        let (client, port) = agent("t", 5.0);
        let mut session = client.start("system", &[]).unwrap();
        let (p1, p2) = (port.clone(), port.clone());
        let agent = std::thread::spawn(move || {
            let wake = rt.block_on(p1.wait_for_wake());
            assert!(matches!(wake, Answer::Wake { .. }), "{wake:?}");
            rt.block_on(p2.tool("read", json!({"what": "vehicle"})))
        });
        let mut report = |_| {};
        let mut ctx = CallCtx { limit_s: 5.0, report: &mut report };
        let reply = session.send(&[Block::Text("Wake-up 1".into())], &mut ctx).unwrap();
        assert_eq!(reply.tool_calls[0].name, "read");
        // The loop ran the call, and the wake-up's time ran out with it.
        let result = Block::ToolResult {
            call_id: reply.tool_calls[0].id.clone(),
            content: json!({"speed_mps": 1.5}).to_string(),
            is_error: false,
        };
        session.results_of_ended_turn(&[result]);
        session.turn_over();
        match agent.join().unwrap() {
            Answer::Tool { result, is_error: false, .. } => {
                assert_eq!(result["speed_mps"], json!(1.5), "the call's own result");
                assert_eq!(result["wake_up_ended"], json!(WAKE_USED_UP));
            }
            other => panic!("not the call's result: {other:?}"),
        }
        // The wake-up has ended: the next tool call is refused at once, with the phase.
        match rt.block_on(port.tool("read", json!({"what": "vehicle"}))) {
            Answer::Refused { phase: Phase::World, .. } => {}
            other => panic!("not refused in phase world: {other:?}"),
        }
    }
}
