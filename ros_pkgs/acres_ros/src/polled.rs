//! A client of `/acres/skill` that never blocks: each call sends or takes what is there, so one
//! loop can keep many goals in flight (the bridge node). [`crate::action::SkillActionClient`]
//! is the waiting client of tests and tools; this one is for nodes that must not stall.

use acres_msgs::acres_interfaces::{SkillGoal, SkillResult};
use ros2_client::action::{GoalId, GoalStatusEnum};
use ros2_client::RmwRequestId;

use crate::node::{RosNode, SkillClient};
use crate::NodeError;

/// A goal sent by a [`PolledSkillClient`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoalHandle(GoalId);

/// A request in flight (goal response, result or cancel response).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending(RmwRequestId);

/// A polled client of the action `Skill`.
pub struct PolledSkillClient {
    client: SkillClient,
}

fn dds<E: std::fmt::Debug>(e: E) -> NodeError {
    NodeError::Dds(format!("{e:?}"))
}

impl PolledSkillClient {
    /// A client of the action at `name` on `node`.
    pub fn new(node: &mut RosNode, name: &str) -> Result<PolledSkillClient, NodeError> {
        Ok(PolledSkillClient { client: node.skill_client(name)? })
    }

    /// True when the goal, result and cancel services are matched, waiting up to `timeout` for
    /// each.
    pub fn ready(&self, node: &RosNode, timeout: std::time::Duration) -> bool {
        node.wait_for_service(self.client.goal_client(), timeout)
            && node.wait_for_service(self.client.result_client(), timeout)
            && node.wait_for_service(self.client.cancel_client(), timeout)
    }

    /// Sends a goal; its response comes through [`PolledSkillClient::goal_response`].
    pub fn send(&self, goal: SkillGoal) -> Result<(GoalHandle, Pending), NodeError> {
        let (req, id) = self.client.send_goal(goal.into()).map_err(dds)?;
        Ok((GoalHandle(id), Pending(req)))
    }

    /// The goal response, when it came: accepted or not.
    pub fn goal_response(&self, p: Pending) -> Option<bool> {
        self.client.receive_goal_response(p.0).ok().flatten().map(|r| r.accepted)
    }

    /// Asks for the goal's result; it comes through [`PolledSkillClient::result`].
    pub fn request_result(&self, g: GoalHandle) -> Result<Pending, NodeError> {
        self.client.request_result(g.0).map(Pending).map_err(dds)
    }

    /// The result, when it came: the goal's final status word (`succeeded`, `aborted`,
    /// `canceled`) and the result.
    pub fn result(&self, p: Pending) -> Option<(&'static str, SkillResult)> {
        let (status, result) = self.client.receive_result(p.0).ok().flatten()?;
        let word = match status {
            GoalStatusEnum::Succeeded => "succeeded",
            GoalStatusEnum::Canceled => "canceled",
            GoalStatusEnum::Aborted => "aborted",
            _ => "unknown",
        };
        Some((word, result.into()))
    }

    /// Asks to cancel a goal; the answer comes through [`PolledSkillClient::cancel_response`].
    pub fn cancel(&self, g: GoalHandle) -> Result<Pending, NodeError> {
        self.client.cancel_goal(g.0).map(Pending).map_err(dds)
    }

    /// The cancel response, when it came: true when the server is canceling the goal.
    pub fn cancel_response(&self, p: Pending) -> Option<bool> {
        self.client.receive_cancel_response(p.0).ok().flatten().map(|r| !r.goals_canceling.is_empty())
    }
}
