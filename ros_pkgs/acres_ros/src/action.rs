//! The action `/acres/skill` without async: a server that keeps the goals' bookkeeping (goal
//! responses, cancel responses, result requests answered when a goal ends, the status array)
//! and a client for tests and tools. Both are polled.
//!
//! Goal states follow ROS: accepted goals are `executing` at once; a goal ends `succeeded`,
//! `aborted` (any other result code) or `canceled` (a cancel was accepted for it). A rejected
//! goal gets `accepted: false` in its goal response; its cause travels on `/acres/events`
//! (`skill_rejected`) and in the result, should a client ask for it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use acres_msgs::acres_interfaces::{SkillFeedback, SkillGoal, SkillResult};
use ros2_client::action::{CancelGoalResponse, GoalId, GoalInfo, GoalStatusEnum};
use ros2_client::action_msgs::{CancelGoalResponseEnum, GoalStatus, GoalStatusArray};
use ros2_client::builtin_interfaces::Time;
use ros2_client::RmwRequestId;
use tracing::debug;

use crate::node::{RosNode, SkillClient, SkillServer};
use crate::NodeError;

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

struct Entry {
    r: GoalRef,
    id: GoalId,
    stamp: Time,
    status: GoalStatusEnum,
    result: Option<SkillResult>,
    pending: Option<RmwRequestId>,
}

/// The server of `/acres/skill`.
pub struct SkillActionServer {
    server: SkillServer,
    goals: VecDeque<Entry>,
    waiting_results: Vec<(RmwRequestId, GoalId)>,
    next: u64,
}

/// Goals kept for result requests after they end.
const KEEP_GOALS: usize = 64;

impl SkillActionServer {
    /// Serves the action at `name` on `node`.
    pub fn new(node: &mut RosNode, name: &str) -> Result<SkillActionServer, NodeError> {
        Ok(SkillActionServer {
            server: node.skill_server(name)?,
            goals: VecDeque::new(),
            waiting_results: Vec::new(),
            next: 1,
        })
    }

    fn entry(&mut self, r: GoalRef) -> Option<&mut Entry> {
        self.goals.iter_mut().find(|e| e.r == r)
    }

    /// New goals and cancels since the last poll; answers result requests of ended goals.
    pub fn poll(&mut self) -> Vec<ActionRequest> {
        let mut out = Vec::new();
        while let Ok(Some((req_id, req))) = self.server.receive_goal() {
            let r = GoalRef(self.next);
            self.next += 1;
            self.goals.push_back(Entry {
                r,
                id: req.goal_id,
                stamp: Time::now(),
                status: GoalStatusEnum::Unknown,
                result: None,
                pending: Some(req_id),
            });
            out.push(ActionRequest::Goal(r, req.goal.into()));
        }
        while let Ok(Some((req_id, req))) = self.server.receive_cancel_request() {
            let (target, before) = cancel_target(&req);
            let mut infos = Vec::new();
            let mut refs = Vec::new();
            let mut terminated = false;
            for e in self.goals.iter_mut() {
                let by_id = target != GoalId::ZERO && e.id == target;
                let by_time = target == GoalId::ZERO && (before == Time::ZERO || e.stamp <= before);
                if !(by_id || by_time) {
                    continue;
                }
                match e.status {
                    GoalStatusEnum::Accepted | GoalStatusEnum::Executing => {
                        e.status = GoalStatusEnum::Canceling;
                        infos.push(GoalInfo { goal_id: e.id, stamp: e.stamp });
                        refs.push(e.r);
                    }
                    _ => terminated = true,
                }
            }
            let return_code = match (infos.is_empty(), terminated) {
                (false, _) => CancelGoalResponseEnum::None,
                (true, true) => CancelGoalResponseEnum::GoalTerminated,
                (true, false) => CancelGoalResponseEnum::UnknownGoal,
            };
            if let Err(e) = self
                .server
                .send_cancel_response(req_id, CancelGoalResponse { return_code, goals_canceling: infos })
            {
                debug!(error = ?e, "cancel response failed");
            }
            if !refs.is_empty() {
                self.publish_status();
                out.push(ActionRequest::Cancel(refs));
            }
        }
        while let Ok(Some((req_id, req))) = self.server.receive_result_request() {
            self.waiting_results.push((req_id, req.goal_id));
        }
        self.answer_results();
        out
    }

    fn answer_results(&mut self) {
        let mut still = Vec::new();
        for (req_id, goal_id) in std::mem::take(&mut self.waiting_results) {
            match self.goals.iter().find(|e| e.id == goal_id) {
                Some(Entry { result: Some(res), status, .. }) => {
                    let resp = ros2_client::action::GetResultResponse {
                        status: *status,
                        result: res.clone().into(),
                    };
                    if let Err(e) = self.server.send_result(req_id, resp) {
                        debug!(error = ?e, "result response failed");
                    }
                }
                Some(_) => still.push((req_id, goal_id)),
                None => {
                    let resp = ros2_client::action::GetResultResponse {
                        status: GoalStatusEnum::Unknown,
                        result: SkillResult {
                            code: String::new(),
                            cause: "unknown goal".into(),
                            skill_id: 0,
                        }
                        .into(),
                    };
                    let _ = self.server.send_result(req_id, resp);
                }
            }
        }
        self.waiting_results = still;
    }

    fn respond(&mut self, r: GoalRef, accepted: bool) {
        let Some(e) = self.entry(r) else { return };
        let Some(req_id) = e.pending.take() else { return };
        e.status = if accepted { GoalStatusEnum::Executing } else { GoalStatusEnum::Unknown };
        let resp = ros2_client::action::SendGoalResponse { accepted, stamp: e.stamp };
        if let Err(err) = self.server.send_goal_response(req_id, resp) {
            debug!(error = ?err, "goal response failed");
        }
        self.publish_status();
    }

    /// Accepts a goal: it is executing.
    pub fn accept(&mut self, r: GoalRef) {
        self.respond(r, true);
    }

    /// Rejects a goal; `result` (code `rejected` and the cause) answers a later result request.
    pub fn reject(&mut self, r: GoalRef, result: SkillResult) {
        self.respond(r, false);
        if let Some(e) = self.entry(r) {
            e.result = Some(result);
            e.status = GoalStatusEnum::Aborted;
        }
        self.trim();
    }

    /// Publishes feedback of a goal.
    pub fn feedback(&self, r: GoalRef, f: SkillFeedback) {
        if let Some(e) = self.goals.iter().find(|e| e.r == r) {
            let _ = self.server.send_feedback(e.id, f.into());
        }
    }

    /// Ends a goal with its result; a waiting result request is answered.
    pub fn finish(&mut self, r: GoalRef, end: GoalEnd, result: SkillResult) {
        let Some(e) = self.entry(r) else { return };
        e.status = match end {
            GoalEnd::Succeeded => GoalStatusEnum::Succeeded,
            GoalEnd::Aborted => GoalStatusEnum::Aborted,
            GoalEnd::Canceled => GoalStatusEnum::Canceled,
        };
        e.result = Some(result);
        self.publish_status();
        self.answer_results();
        self.trim();
    }

    /// True when a cancel was accepted for the goal.
    pub fn canceling(&self, r: GoalRef) -> bool {
        self.goals.iter().any(|e| e.r == r && e.status == GoalStatusEnum::Canceling)
    }

    fn trim(&mut self) {
        while self.goals.len() > KEEP_GOALS {
            self.goals.pop_front();
        }
    }

    fn publish_status(&self) {
        let status_list = self
            .goals
            .iter()
            .filter(|e| e.status != GoalStatusEnum::Unknown)
            .map(|e| GoalStatus { goal_info: GoalInfo { goal_id: e.id, stamp: e.stamp }, status: e.status })
            .collect();
        let _ = self.server.send_goal_statuses(GoalStatusArray { status_list });
    }
}

/// The goal id and time of a cancel request (its fields are private in ros2-client; read
/// through its serde form).
fn cancel_target(req: &ros2_client::action::CancelGoalRequest) -> (GoalId, Time) {
    #[derive(serde::Deserialize)]
    struct Req {
        goal_info: GoalInfo,
    }
    match serde_json::to_value(req).and_then(serde_json::from_value::<Req>) {
        Ok(r) => (r.goal_info.goal_id, r.goal_info.stamp),
        Err(_) => (GoalId::ZERO, Time::ZERO),
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

/// A polled client of `/acres/skill` (tests and tools).
pub struct SkillActionClient {
    client: SkillClient,
}

/// A goal the client sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentGoal(GoalId);

impl SkillActionClient {
    /// A client of the action at `name` on `node`.
    pub fn new(node: &mut RosNode, name: &str) -> Result<SkillActionClient, NodeError> {
        Ok(SkillActionClient { client: node.skill_client(name)? })
    }

    /// Waits until the server's goal service is matched (discovery), up to `timeout`.
    /// Each check is repeated in short slices: every new check reads the current match state, so
    /// a match event that came before the wait began is not missed.
    pub fn wait_for_server(&self, node: &RosNode, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let slice = Duration::from_millis(250);
        let wait = |ready: &dyn Fn() -> bool| loop {
            if ready() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
        };
        wait(&|| node.wait_for_service(self.client.goal_client(), slice))
            && wait(&|| node.wait_for_service(self.client.result_client(), slice))
            && wait(&|| node.wait_for_service(self.client.cancel_client(), slice))
    }

    /// Sends a goal and waits for its response: `Some(true)` accepted, `Some(false)` rejected,
    /// `None` no answer within `timeout`.
    pub fn send(&self, goal: SkillGoal, timeout: Duration) -> Result<(SentGoal, Option<bool>), NodeError> {
        let (req, id) = self.client.send_goal(goal.into()).map_err(|e| NodeError::Dds(format!("{e:?}")))?;
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(resp)) = self.client.receive_goal_response(req) {
                return Ok((SentGoal(id), Some(resp.accepted)));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok((SentGoal(id), None))
    }

    /// Asks to cancel a goal; true when the server answered that it is canceling it.
    pub fn cancel(&self, g: SentGoal, timeout: Duration) -> Result<bool, NodeError> {
        let req = self.client.cancel_goal(g.0).map_err(|e| NodeError::Dds(format!("{e:?}")))?;
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(resp)) = self.client.receive_cancel_response(req) {
                return Ok(!resp.goals_canceling.is_empty());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(false)
    }

    /// Requests the result and waits for it up to `timeout`.
    pub fn result(&self, g: SentGoal, timeout: Duration) -> Result<Option<GoalOutcome>, NodeError> {
        let req = self.client.request_result(g.0).map_err(|e| NodeError::Dds(format!("{e:?}")))?;
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some((status, result))) = self.client.receive_result(req) {
                let status = match status {
                    GoalStatusEnum::Succeeded => "succeeded",
                    GoalStatusEnum::Canceled => "canceled",
                    GoalStatusEnum::Aborted => "aborted",
                    _ => "unknown",
                };
                return Ok(Some(GoalOutcome { status: status.into(), result: result.into() }));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(None)
    }

    /// The newest feedback of a goal, if any arrived.
    pub fn feedback(&self, g: SentGoal) -> Option<SkillFeedback> {
        let mut last = None;
        while let Ok(Some(f)) = self.client.receive_feedback(g.0) {
            last = Some(f.into());
        }
        last
    }
}
