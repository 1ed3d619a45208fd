//! The goals one harness sent through the bridge: each is followed from its goal response to
//! its result, and answered on the link (`reply`, then `result`). When the harness goes, every
//! goal still open is cancelled and followed until its terminal state, which is logged.

use std::time::{Duration, Instant};

use acres_link_protocol::{FromBridge, SkillDone, SkillReply};
use acres_msgs::acres_interfaces::SkillGoal;
use acres_ros::polled::{GoalHandle, Pending, PolledSkillClient};
use tracing::{info, warn};

/// The longest string of a goal (its skill, place and field), bytes: a longer one is rejected
/// at the bridge, before ROS sees it.
pub const GOAL_STRING_MAX: usize = 128;

/// How long a rejected goal's cause (its result) is waited for, s.
const REJECT_CAUSE_WAIT_S: f64 = 1.0;
/// How long a cancelled goal's terminal state is waited for, s.
const CANCEL_CONFIRM_S: f64 = 5.0;

enum Phase {
    Response(Pending),
    Result(Pending),
    RejectCause(Pending, Instant),
    Cancelling { cancel: Pending, result: Option<Pending>, since: Instant },
}

struct Goal {
    id: u64,
    skill: String,
    handle: GoalHandle,
    phase: Phase,
}

/// The open goals.
#[derive(Default)]
pub struct Goals {
    goals: Vec<Goal>,
}

impl Goals {
    /// Sends a goal for the harness's request `id`; an error is the reply.
    pub fn send(&mut self, client: &PolledSkillClient, id: u64, goal: SkillGoal) -> Option<FromBridge> {
        if let Some(cause) = too_long(&goal) {
            warn!(id, "goal rejected at the bridge: {cause}");
            return Some(FromBridge::Reply(SkillReply { id, accepted: false, cause }));
        }
        let skill = goal.skill.clone();
        match client.send(goal) {
            Ok((handle, p)) => {
                info!(id, %skill, "goal sent");
                self.goals.push(Goal { id, skill, handle, phase: Phase::Response(p) });
                None
            }
            Err(e) => Some(FromBridge::Reply(SkillReply {
                id,
                accepted: false,
                cause: format!("the goal could not be sent: {e}"),
            })),
        }
    }

    /// True when no goal is followed any more.
    pub fn is_empty(&self) -> bool {
        self.goals.is_empty()
    }

    /// Cancels the goal of request `id`, or every goal (`None`).
    pub fn cancel(&mut self, client: &PolledSkillClient, id: Option<u64>, why: &str) {
        for g in &mut self.goals {
            if id.is_some_and(|i| i != g.id) || matches!(g.phase, Phase::Cancelling { .. }) {
                continue;
            }
            let result = match g.phase {
                Phase::Result(p) => Some(p),
                _ => None,
            };
            match client.cancel(g.handle) {
                Ok(cancel) => {
                    info!(id = g.id, skill = %g.skill, why, "goal cancel sent");
                    g.phase = Phase::Cancelling { cancel, result, since: Instant::now() };
                }
                Err(e) => warn!(id = g.id, error = %e, "goal cancel could not be sent"),
            }
        }
    }

    /// Takes what came from the action server; returns the lines for the harness.
    pub fn poll(&mut self, client: &PolledSkillClient) -> Vec<FromBridge> {
        let mut out = Vec::new();
        self.goals.retain_mut(|g| {
            let (keep, msg) = step(client, g);
            out.extend(msg);
            keep
        });
        out
    }
}

fn step(client: &PolledSkillClient, g: &mut Goal) -> (bool, Option<FromBridge>) {
    match g.phase {
        Phase::Response(p) => match client.goal_response(p) {
            Some(accepted) => match client.request_result(g.handle) {
                Ok(r) if accepted => {
                    g.phase = Phase::Result(r);
                    (true, Some(FromBridge::Reply(SkillReply { id: g.id, accepted, cause: String::new() })))
                }
                Ok(r) => {
                    g.phase = Phase::RejectCause(r, Instant::now());
                    (true, None)
                }
                Err(e) => (false, Some(reply_rejected(g.id, format!("no result: {e}")))),
            },
            None => (true, None),
        },
        Phase::Result(p) => match client.result(p) {
            Some((status, r)) => {
                info!(id = g.id, skill = %g.skill, status, code = %r.code, "goal ended");
                let code = if status == "canceled" && r.code.is_empty() { "canceled".into() } else { r.code };
                let done = SkillDone { id: g.id, skill_id: r.skill_id, code, cause: r.cause };
                (false, Some(FromBridge::Result(done)))
            }
            None => (true, None),
        },
        Phase::RejectCause(p, since) => match client.result(p) {
            Some((_, r)) => (false, Some(reply_rejected(g.id, r.cause))),
            None if since.elapsed() > Duration::from_secs_f64(REJECT_CAUSE_WAIT_S) => {
                (false, Some(reply_rejected(g.id, "rejected by the skill server".into())))
            }
            None => (true, None),
        },
        Phase::Cancelling { cancel, result, since } => {
            if let Some(c) = client.cancel_response(cancel) {
                info!(id = g.id, canceling = c, "cancel answered");
            }
            let result = match result {
                Some(r) => r,
                None => match client.request_result(g.handle) {
                    Ok(r) => {
                        g.phase = Phase::Cancelling { cancel, result: Some(r), since };
                        return (true, None);
                    }
                    Err(_) => return (false, None),
                },
            };
            match client.result(result) {
                Some((status, r)) => {
                    info!(
                        id = g.id, skill = %g.skill, status, code = %r.code, cause = %r.cause,
                        after_ms = since.elapsed().as_millis() as u64, "cancelled goal: terminal state confirmed"
                    );
                    (false, None)
                }
                None if since.elapsed() > Duration::from_secs_f64(CANCEL_CONFIRM_S) => {
                    warn!(id = g.id, skill = %g.skill, "cancelled goal: no terminal state within 5 s");
                    (false, None)
                }
                None => (true, None),
            }
        }
    }
}

fn reply_rejected(id: u64, cause: String) -> FromBridge {
    FromBridge::Reply(SkillReply { id, accepted: false, cause })
}

/// Why a goal's strings are refused (one longer than [`GOAL_STRING_MAX`]), if they are; the
/// cause names the field and its length, never its text.
pub fn too_long(goal: &SkillGoal) -> Option<String> {
    [("skill", &goal.skill), ("place", &goal.place), ("field", &goal.field)]
        .into_iter()
        .find(|(_, v)| v.len() > GOAL_STRING_MAX)
        .map(|(k, v)| {
            format!("the goal's {k} has {} bytes, more than the {GOAL_STRING_MAX} allowed", v.len())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_string_is_named_not_echoed() {
        let ok = SkillGoal { skill: "goto".into(), place: "F56".into(), ..Default::default() };
        assert_eq!(too_long(&ok), None);
        let long = SkillGoal { skill: "g".repeat(1 << 20), ..Default::default() };
        let cause = too_long(&long).unwrap();
        assert_eq!(cause, "the goal's skill has 1048576 bytes, more than the 128 allowed");
        let place = SkillGoal { place: "p".repeat(GOAL_STRING_MAX + 1), ..ok };
        assert!(too_long(&place).unwrap().contains("place has 129 bytes"));
    }
}
