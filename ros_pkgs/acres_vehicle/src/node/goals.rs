//! Goals of `/acres/skill` and the skills they started: a goal's request goes to the skill
//! server; the `skill_ended` event of its skill ends the goal with the event's code and cause.

use std::time::{Duration, Instant};

use crate::{EventName, Observation, ResultCode, SkillEvent, SkillKind, SkillRequest, SkillServer};
use acres_msgs::acres_interfaces::{SkillEvent as EventMsg, SkillFeedback, SkillGoal, SkillResult};
use acres_ros::action::{ActionRequest, GoalEnd, GoalRef, SkillActionServer};
use acres_ros::{NodeError, Pub, RosNode};

use super::OnCancel;

/// Feedback period, wall time.
const FEEDBACK_EVERY: Duration = Duration::from_millis(500);

/// The action server and the goals whose skills run.
pub(crate) struct Goals {
    action: SkillActionServer,
    active: Vec<(GoalRef, u64)>,
    last_feedback: Instant,
    /// A goal that started a skill was accepted since the last [`Goals::take_accepted`].
    accepted: bool,
}

/// The skill request of a goal; an unknown skill word is refused with its cause.
pub(crate) fn request_of(g: &SkillGoal) -> Result<SkillRequest, String> {
    // Any other word names a learned skill (the skill server refuses one it does not have).
    let (skill, name) = match SkillKind::parse(&g.skill) {
        Some(k) => (Some(k), None),
        None if g.skill.is_empty() => (None, None),
        None if is_tool_name(&g.skill) => (Some(SkillKind::Learned), Some(g.skill.clone())),
        None => {
            let words: Vec<_> = SkillKind::ALL.iter().map(|k| k.as_str()).collect();
            return Err(format!(
                "unknown skill \"{}\"; skills are {} and the learned skills' names",
                g.skill,
                words.join(", ")
            ));
        }
    };
    let text = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let num = |v: f64| (!v.is_nan()).then_some(v);
    Ok(SkillRequest {
        skill,
        place: text(&g.place),
        field: text(&g.field),
        seconds: num(g.seconds),
        speed_cap_mps: num(g.speed_cap_mps),
        name,
    })
}

/// A learned skill's name: lower-case letters, digits and `_`, starting with a letter.
fn is_tool_name(w: &str) -> bool {
    w.starts_with(|c: char| c.is_ascii_lowercase())
        && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn rejected(cause: String) -> SkillResult {
    SkillResult { code: ResultCode::Rejected.as_str().into(), cause, skill_id: 0 }
}

impl Goals {
    pub(crate) fn new(node: &mut RosNode) -> Result<Goals, NodeError> {
        Ok(Goals {
            action: SkillActionServer::new(node, "acres/skill")?,
            active: Vec::new(),
            last_feedback: Instant::now(),
            accepted: false,
        })
    }

    /// Takes new goals and cancels; true when any came.
    pub(crate) fn serve(
        &mut self,
        server: &mut SkillServer,
        obs: Option<&Observation>,
        on_cancel: OnCancel,
        events: &Pub<EventMsg>,
    ) -> bool {
        let reqs = self.action.poll();
        let any = !reqs.is_empty();
        for req in reqs {
            match req {
                ActionRequest::Goal(r, g) => self.on_goal(server, obs, r, &g, events),
                ActionRequest::Cancel(refs) => {
                    for r in refs {
                        match self.active.iter().find(|(a, _)| *a == r) {
                            Some((_, id)) if server.status().id == Some(*id) => {
                                super::apply_on_cancel(
                                    server,
                                    obs,
                                    on_cancel,
                                    format!("goal cancelled: skill #{id} stopped"),
                                );
                            }
                            _ => {
                                self.active.retain(|(a, _)| *a != r);
                                let res = SkillResult {
                                    code: ResultCode::Stopped.as_str().into(),
                                    cause: "cancelled".into(),
                                    skill_id: 0,
                                };
                                self.action.finish(r, GoalEnd::Canceled, res);
                            }
                        }
                    }
                }
            }
        }
        any
    }

    fn on_goal(
        &mut self,
        server: &mut SkillServer,
        obs: Option<&Observation>,
        r: GoalRef,
        g: &SkillGoal,
        events: &Pub<EventMsg>,
    ) {
        let t_s = obs.map_or(0.0, |o| o.t_s);
        let refuse = |cause: String| {
            // The skill server never saw it: the node reports the refusal itself.
            let e = SkillEvent {
                t_s,
                name: EventName::SkillRejected,
                id: None,
                skill: SkillKind::parse(&g.skill),
                code: Some(ResultCode::Rejected),
                cause: Some(cause.clone()),
                detail: crate::EventDetail::None {},
            };
            events.publish(super::event_msg(&e));
            rejected(cause)
        };
        let Some(obs) = obs else {
            let res = refuse("no odometry yet: the vehicle's pose is unknown".into());
            self.action.reject(r, res);
            return;
        };
        let request = match request_of(g) {
            Ok(q) => q,
            Err(cause) => {
                let res = refuse(cause);
                self.action.reject(r, res);
                return;
            }
        };
        let reply = server.request(&request, obs);
        if !reply.accepted {
            self.action.reject(r, rejected(reply.cause.unwrap_or_default()));
        } else if request.skill == Some(SkillKind::Stop) {
            self.action.accept(r);
            let res = SkillResult {
                code: ResultCode::Succeeded.as_str().into(),
                cause: reply.cause.unwrap_or_default(),
                skill_id: 0,
            };
            self.action.finish(r, GoalEnd::Succeeded, res);
        } else {
            self.action.accept(r);
            self.active.push((r, reply.id.unwrap_or_default()));
            self.accepted = true;
        }
    }

    /// True when skill `id` is a goal's (not one `on_cancel` started).
    pub(crate) fn is_goal_skill(&self, id: u64) -> bool {
        self.active.iter().any(|(_, a)| *a == id)
    }

    /// True once after a goal that started a skill was accepted (it arms the deadman).
    pub(crate) fn take_accepted(&mut self) -> bool {
        std::mem::take(&mut self.accepted)
    }

    /// A `skill_ended` of a goal's skill ends the goal.
    pub(crate) fn on_event(&mut self, e: &SkillEvent, _server: &SkillServer) {
        if e.name != EventName::SkillEnded {
            return;
        }
        let Some(i) = self.active.iter().position(|(_, id)| Some(*id) == e.id) else { return };
        let (r, id) = self.active.remove(i);
        let code = e.code.unwrap_or(ResultCode::Failed);
        let end = if self.action.canceling(r) {
            GoalEnd::Canceled
        } else if code == ResultCode::Succeeded {
            GoalEnd::Succeeded
        } else {
            GoalEnd::Aborted
        };
        let res = SkillResult {
            code: code.as_str().into(),
            cause: e.cause.clone().unwrap_or_default(),
            skill_id: id,
        };
        self.action.finish(r, end, res);
    }

    /// Feedback of the running goal, every [`FEEDBACK_EVERY`].
    pub(crate) fn feedback(&mut self, server: &SkillServer) {
        if self.last_feedback.elapsed() < FEEDBACK_EVERY {
            return;
        }
        self.last_feedback = Instant::now();
        let st = server.status();
        for (r, id) in &self.active {
            if st.id == Some(*id) {
                let f = SkillFeedback {
                    progress: st.progress,
                    state: st.state.as_str().into(),
                    remaining_m: st.remaining_m.unwrap_or(f64::NAN),
                };
                self.action.feedback(*r, f);
            }
        }
    }
}
