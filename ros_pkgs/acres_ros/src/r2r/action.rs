//! The action `/acres/skill` on the r2r backend, with the API of the ros2-client backend's
//! `action` module: a polled server and a waiting client for tests and tools.
//!
//! rcl_action keeps the ROS bookkeeping here (goal states, the status topic, result requests
//! answered when a goal ends, goals expiring); this server keeps which goal is which
//! ([`GoalRef`]), answers cancels of running goals (they are `canceling`) and hands the skill
//! server the same [`ActionRequest`]s as the other backend. One difference: a rejected goal's
//! result is not kept (rcl_action forgets a goal it never accepted), so a result request for it
//! is answered as for an unknown goal; its cause travels on `/acres/events` as on both backends.
//! The goal, result and feedback travel as r2r's generated `acres_interfaces` types, converted
//! from and to `acres_msgs`' here.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use acres_msgs::acres_interfaces::{SkillFeedback, SkillGoal, SkillResult};
use futures::{Future, Stream};
use r2r::acres_interfaces::action::Skill;
use tracing::debug;

use crate::node::{rcl, ready, wait_on, NodeError, RosNode};

/// A goal of the server, by its place in arrival order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoalRef(u64);

/// How a goal ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoalEnd {
    /// The skill succeeded.
    Succeeded,
    /// The skill ended otherwise (stopped, blocked, failed, rejected).
    Aborted,
    /// A cancel ended it.
    Canceled,
}

/// What a poll of the server brought.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionRequest {
    /// A new goal: answer with [`SkillActionServer::accept`] or [`SkillActionServer::reject`].
    Goal(GoalRef, SkillGoal),
    /// A cancel of these goals (already answered: they are `canceling`); end them.
    Cancel(Vec<GoalRef>),
}

pub(crate) fn to_r2r_goal(g: SkillGoal) -> Skill::Goal {
    Skill::Goal {
        skill: g.skill,
        place: g.place,
        field: g.field,
        seconds: g.seconds,
        speed_cap_mps: g.speed_cap_mps,
    }
}
fn from_r2r_goal(g: Skill::Goal) -> SkillGoal {
    SkillGoal {
        skill: g.skill,
        place: g.place,
        field: g.field,
        seconds: g.seconds,
        speed_cap_mps: g.speed_cap_mps,
    }
}
fn to_r2r_result(r: SkillResult) -> Skill::Result {
    Skill::Result { code: r.code, cause: r.cause, skill_id: r.skill_id }
}
pub(crate) fn from_r2r_result(r: Skill::Result) -> SkillResult {
    SkillResult { code: r.code, cause: r.cause, skill_id: r.skill_id }
}
fn to_r2r_feedback(f: SkillFeedback) -> Skill::Feedback {
    Skill::Feedback { progress: f.progress, state: f.state, remaining_m: f.remaining_m }
}
pub(crate) fn from_r2r_feedback(f: Skill::Feedback) -> SkillFeedback {
    SkillFeedback { progress: f.progress, state: f.state, remaining_m: f.remaining_m }
}

/// The next item of a stream, if one is there (never waits).
pub(crate) fn next_now<S: Stream + Unpin + ?Sized>(s: &mut S) -> Option<S::Item> {
    match Pin::new(s).poll_next(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(item) => item,
        Poll::Pending => None,
    }
}

type GoalRequests = Box<dyn Stream<Item = r2r::ActionServerGoalRequest<Skill::Action>> + Send + Unpin>;
type CancelRequests = Box<dyn Stream<Item = r2r::ActionServerCancelRequest> + Send + Unpin>;

enum State {
    /// Not answered yet.
    New(r2r::ActionServerGoalRequest<Skill::Action>),
    /// Accepted and running; `canceling` once a cancel was accepted.
    Running { goal: r2r::ActionServerGoal<Skill::Action>, cancels: CancelRequests, canceling: bool },
}

/// The server of `/acres/skill`.
pub struct SkillActionServer {
    requests: GoalRequests,
    goals: VecDeque<(GoalRef, State)>,
    next: u64,
}

impl SkillActionServer {
    /// Serves the action at `name` on `node`.
    pub fn new(node: &mut RosNode, name: &str) -> Result<SkillActionServer, NodeError> {
        let name = node.name(name);
        let requests = node.rcl().create_action_server::<Skill::Action>(&name).map_err(rcl(&name))?;
        Ok(SkillActionServer { requests: Box::new(requests), goals: VecDeque::new(), next: 1 })
    }

    /// New goals and cancels since the last poll.
    pub fn poll(&mut self) -> Vec<ActionRequest> {
        let mut out = Vec::new();
        while let Some(req) = next_now(&mut self.requests) {
            let r = GoalRef(self.next);
            self.next += 1;
            out.push(ActionRequest::Goal(r, from_r2r_goal(req.goal.clone())));
            self.goals.push_back((r, State::New(req)));
        }
        let mut refs = Vec::new();
        for (r, state) in self.goals.iter_mut() {
            if let State::Running { cancels, canceling, .. } = state {
                while let Some(c) = next_now(cancels) {
                    c.accept();
                    if !*canceling {
                        *canceling = true;
                        refs.push(*r);
                    }
                }
            }
        }
        if !refs.is_empty() {
            out.push(ActionRequest::Cancel(refs));
        }
        out
    }

    fn take(&mut self, r: GoalRef) -> Option<State> {
        let i = self.goals.iter().position(|(g, _)| *g == r)?;
        self.goals.remove(i).map(|(_, s)| s)
    }

    /// Accepts a goal: it is executing.
    pub fn accept(&mut self, r: GoalRef) {
        let Some(state) = self.take(r) else { return };
        match state {
            State::New(req) => match req.accept() {
                Ok((goal, cancels)) => {
                    let running = State::Running { goal, cancels: Box::new(cancels), canceling: false };
                    self.goals.push_back((r, running));
                }
                Err(e) => debug!(error = %e, "goal accept failed"),
            },
            running => self.goals.push_back((r, running)),
        }
    }

    /// Rejects a goal (its cause travels on `/acres/events`; see the module's docs).
    pub fn reject(&mut self, r: GoalRef, result: SkillResult) {
        if let Some(State::New(req)) = self.take(r) {
            debug!(cause = %result.cause, "goal rejected");
            if let Err(e) = req.reject() {
                debug!(error = %e, "goal reject failed");
            }
        }
    }

    /// Publishes feedback of a goal.
    pub fn feedback(&self, r: GoalRef, f: SkillFeedback) {
        if let Some((_, State::Running { goal, .. })) = self.goals.iter().find(|(g, _)| *g == r) {
            let _ = goal.publish_feedback(to_r2r_feedback(f));
        }
    }

    /// Ends a goal with its result; rcl_action answers its result requests.
    pub fn finish(&mut self, r: GoalRef, end: GoalEnd, result: SkillResult) {
        let Some(State::Running { mut goal, .. }) = self.take(r) else { return };
        let result = to_r2r_result(result);
        let done = match end {
            GoalEnd::Succeeded => goal.succeed(result),
            GoalEnd::Aborted => goal.abort(result),
            GoalEnd::Canceled => goal.cancel(result),
        };
        if let Err(e) = done {
            debug!(error = %e, ?end, "goal end failed");
        }
    }

    /// True when a cancel was accepted for the goal.
    pub fn canceling(&self, r: GoalRef) -> bool {
        self.goals.iter().any(|(g, s)| *g == r && matches!(s, State::Running { canceling: true, .. }))
    }
}

/// How a goal sent by [`SkillActionClient`] ended.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalOutcome {
    /// `succeeded`, `aborted`, `canceled` (ROS's goal status).
    pub status: String,
    /// The result.
    pub result: SkillResult,
}

type SendFuture = Pin<Box<dyn Future<Output = r2r::Result<Accepted>>>>;
type ResultFuture = Pin<Box<dyn Future<Output = r2r::Result<(r2r::GoalStatus, Skill::Result)>>>>;
type CancelFuture = Pin<Box<dyn Future<Output = r2r::Result<()>>>>;
type Feedbacks = Box<dyn Stream<Item = Skill::Feedback> + Unpin>;
type Accepted = (r2r::ActionClientGoal<Skill::Action>, ResultFuture, Feedbacks);

/// A goal of a client, from sending to its result.
enum Sent {
    /// Waiting for the goal response.
    Asked(SendFuture),
    /// Accepted: the goal's handle, its result (until taken) and its feedback.
    Accepted(r2r::ActionClientGoal<Skill::Action>, Option<ResultFuture>, Feedbacks),
    /// Rejected (or the request failed).
    Refused,
}

/// What both clients share: the r2r client and the goals sent, by number.
pub(crate) struct ClientCore {
    client: r2r::ActionClient<Skill::Action>,
    goals: Mutex<HashMap<u64, Sent>>,
    cancels: Mutex<HashMap<u64, CancelFuture>>,
    next: Mutex<u64>,
}

/// The word of a final goal status.
fn status_word(s: r2r::GoalStatus) -> &'static str {
    match s {
        r2r::GoalStatus::Succeeded => "succeeded",
        r2r::GoalStatus::Canceled => "canceled",
        r2r::GoalStatus::Aborted => "aborted",
        _ => "unknown",
    }
}

impl ClientCore {
    pub(crate) fn new(node: &mut RosNode, name: &str) -> Result<ClientCore, NodeError> {
        let name = node.name(name);
        let client = node.rcl().create_action_client::<Skill::Action>(&name).map_err(rcl(&name))?;
        Ok(ClientCore { client, goals: Mutex::default(), cancels: Mutex::default(), next: Mutex::new(1) })
    }

    fn number(&self) -> u64 {
        let mut n = self.next.lock().unwrap_or_else(PoisonError::into_inner);
        *n += 1;
        *n - 1
    }

    /// True once the server is there, waiting up to `timeout`.
    pub(crate) fn ready(&self, timeout: Duration) -> bool {
        match r2r::Node::is_available(&self.client) {
            Ok(f) => matches!(wait_on(Box::pin(f), timeout), Some(Ok(()))),
            Err(_) => false,
        }
    }

    pub(crate) fn send(&self, goal: SkillGoal) -> Result<u64, NodeError> {
        let f = self.client.send_goal_request(to_r2r_goal(goal)).map_err(rcl("send goal"))?;
        let f: SendFuture = Box::pin(async move {
            let (g, result, feedback) = f.await?;
            let result: ResultFuture = Box::pin(result);
            let feedback: Feedbacks = Box::new(feedback);
            Ok((g, result, feedback))
        });
        let id = self.number();
        self.goals.lock().unwrap_or_else(PoisonError::into_inner).insert(id, Sent::Asked(f));
        Ok(id)
    }

    /// The goal response, when it came: accepted or not.
    pub(crate) fn goal_response(&self, id: u64) -> Option<bool> {
        let mut goals = self.goals.lock().unwrap_or_else(PoisonError::into_inner);
        let sent = goals.get_mut(&id)?;
        match sent {
            Sent::Asked(f) => {
                let answer = ready(f)?;
                *sent = match answer {
                    Ok((g, result, feedback)) => Sent::Accepted(g, Some(result), feedback),
                    Err(e) => {
                        debug!(error = %e, "goal not accepted");
                        Sent::Refused
                    }
                };
                Some(matches!(sent, Sent::Accepted(..)))
            }
            Sent::Accepted(..) => Some(true),
            Sent::Refused => Some(false),
        }
    }

    /// The result, when it came (once).
    pub(crate) fn result(&self, id: u64) -> Option<(&'static str, SkillResult)> {
        let mut goals = self.goals.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(Sent::Accepted(_, result @ Some(_), _)) = goals.get_mut(&id) else { return None };
        let answer = ready(result.as_mut()?)?;
        *result = None;
        match answer {
            Ok((status, r)) => Some((status_word(status), from_r2r_result(r))),
            Err(e) => {
                Some(("unknown", SkillResult { code: String::new(), cause: e.to_string(), skill_id: 0 }))
            }
        }
    }

    /// Asks to cancel a goal; the number of the cancel request.
    pub(crate) fn cancel(&self, id: u64) -> Result<u64, NodeError> {
        let f: CancelFuture = {
            let goals = self.goals.lock().unwrap_or_else(PoisonError::into_inner);
            match goals.get(&id) {
                Some(Sent::Accepted(g, ..)) => Box::pin(g.cancel().map_err(rcl("cancel"))?),
                _ => Box::pin(async { Err(r2r::Error::GoalCancelUnknownGoalID) }),
            }
        };
        let c = self.number();
        self.cancels.lock().unwrap_or_else(PoisonError::into_inner).insert(c, f);
        Ok(c)
    }

    /// The cancel response, when it came: true when the server is canceling the goal.
    pub(crate) fn cancel_response(&self, c: u64) -> Option<bool> {
        let mut cancels = self.cancels.lock().unwrap_or_else(PoisonError::into_inner);
        let answer = ready(cancels.get_mut(&c)?)?;
        cancels.remove(&c);
        Some(answer.is_ok())
    }

    /// The newest feedback of a goal, if any arrived.
    pub(crate) fn feedback(&self, id: u64) -> Option<SkillFeedback> {
        let mut goals = self.goals.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(Sent::Accepted(_, _, feedback)) = goals.get_mut(&id) else { return None };
        let mut last = None;
        while let Some(f) = next_now(feedback) {
            last = Some(from_r2r_feedback(f));
        }
        last
    }
}

/// A waiting client of `/acres/skill` (tests and tools).
pub struct SkillActionClient {
    core: ClientCore,
}

/// A goal the client sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentGoal(u64);

/// How often the waiting client looks for an answer.
const LOOK: Duration = Duration::from_millis(2);

/// Looks with `f` every [`LOOK`] until it answers or `timeout` passes.
fn within<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(LOOK);
    }
}

impl SkillActionClient {
    /// A client of the action at `name` on `node`.
    pub fn new(node: &mut RosNode, name: &str) -> Result<SkillActionClient, NodeError> {
        Ok(SkillActionClient { core: ClientCore::new(node, name)? })
    }

    /// Waits until the server is there (discovery), up to `timeout`.
    pub fn wait_for_server(&self, _node: &RosNode, timeout: Duration) -> bool {
        self.core.ready(timeout)
    }

    /// Sends a goal and waits for its response: `Some(true)` accepted, `Some(false)` rejected,
    /// `None` no answer within `timeout`.
    pub fn send(&self, goal: SkillGoal, timeout: Duration) -> Result<(SentGoal, Option<bool>), NodeError> {
        let id = self.core.send(goal)?;
        Ok((SentGoal(id), within(timeout, || self.core.goal_response(id))))
    }

    /// Asks to cancel a goal; true when the server answered that it is canceling it.
    pub fn cancel(&self, g: SentGoal, timeout: Duration) -> Result<bool, NodeError> {
        let c = self.core.cancel(g.0)?;
        Ok(within(timeout, || self.core.cancel_response(c)).unwrap_or(false))
    }

    /// Waits for the result up to `timeout` (r2r asked for it when the goal was accepted).
    pub fn result(&self, g: SentGoal, timeout: Duration) -> Result<Option<GoalOutcome>, NodeError> {
        Ok(within(timeout, || self.core.result(g.0))
            .map(|(status, result)| GoalOutcome { status: status.into(), result }))
    }

    /// The newest feedback of a goal, if any arrived.
    pub fn feedback(&self, g: SentGoal) -> Option<SkillFeedback> {
        self.core.feedback(g.0)
    }
}
