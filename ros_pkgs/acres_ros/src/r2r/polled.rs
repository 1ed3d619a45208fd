//! A client of `/acres/skill` that never blocks, on the r2r backend (the API of the ros2-client
//! backend's `polled` module): each call sends or takes what is there, so one loop can keep many
//! goals in flight (the bridge node).

use acres_msgs::acres_interfaces::{SkillGoal, SkillResult};

use crate::action::ClientCore;
use crate::node::RosNode;
use crate::NodeError;

/// A goal sent by a [`PolledSkillClient`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoalHandle(u64);

/// A request in flight (goal response, result or cancel response).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending(u64);

/// A polled client of the action `Skill`.
pub struct PolledSkillClient {
    core: ClientCore,
}

impl PolledSkillClient {
    /// A client of the action at `name` on `node`.
    pub fn new(node: &mut RosNode, name: &str) -> Result<PolledSkillClient, NodeError> {
        Ok(PolledSkillClient { core: ClientCore::new(node, name)? })
    }

    /// True when the action server is there, waiting up to `timeout`.
    pub fn ready(&self, _node: &RosNode, timeout: std::time::Duration) -> bool {
        self.core.ready(timeout)
    }

    /// Sends a goal; its response comes through [`PolledSkillClient::goal_response`].
    pub fn send(&self, goal: SkillGoal) -> Result<(GoalHandle, Pending), NodeError> {
        let id = self.core.send(goal)?;
        Ok((GoalHandle(id), Pending(id)))
    }

    /// The goal response, when it came: accepted or not.
    pub fn goal_response(&self, p: Pending) -> Option<bool> {
        self.core.goal_response(p.0)
    }

    /// Asks for the goal's result (r2r asked for it when the goal was accepted); it comes
    /// through [`PolledSkillClient::result`].
    pub fn request_result(&self, g: GoalHandle) -> Result<Pending, NodeError> {
        Ok(Pending(g.0))
    }

    /// The result, when it came: the goal's final status word (`succeeded`, `aborted`,
    /// `canceled`) and the result.
    pub fn result(&self, p: Pending) -> Option<(&'static str, SkillResult)> {
        self.core.result(p.0)
    }

    /// Asks to cancel a goal; the answer comes through [`PolledSkillClient::cancel_response`].
    pub fn cancel(&self, g: GoalHandle) -> Result<Pending, NodeError> {
        self.core.cancel(g.0).map(Pending)
    }

    /// The cancel response, when it came: true when the server is canceling the goal.
    pub fn cancel_response(&self, p: Pending) -> Option<bool> {
        self.core.cancel_response(p.0)
    }
}
