//! Skill ends that do not hang on one message. A skill's end reaches the harness twice: its
//! `skill_ended` event (`/acres/events`, in a step) and its goal's `result` (the action). The
//! event is the one the loop reads; when it does not come (a lost sample), the result ends the
//! skill: a `skill_ended` is made from the result's code and cause once the vehicle's clock has
//! gone [`RESULT_GRACE_S`] past the first step after the result (the vehicle node publishes the
//! event before it finishes the goal, so the event is normally in one of those steps). An
//! event that comes after one was made is dropped, so the loop sees each end once.

use std::collections::BTreeSet;

use acres_link_protocol::SkillDone;
use acres_vehicle::{EventDetail, EventName, ResultCode, SkillEvent, Status};

/// How long, on the vehicle's clock, a result waits for its skill's `skill_ended`, s.
pub const RESULT_GRACE_S: f64 = 1.0;

/// A result whose `skill_ended` has not come yet.
#[derive(Debug)]
struct Pending {
    done: SkillDone,
    /// The last step received before the result.
    after_seq: u64,
    /// When the grace ends (vehicle's clock, mission time), once a later step came.
    due_t_s: Option<f64>,
}

/// The skills' ends seen so far and the results waiting for their event.
#[derive(Debug, Default)]
pub struct Ends {
    ended: BTreeSet<u64>,
    pending: Vec<Pending>,
    /// The latest status of a running skill (for the details of an end made from its result).
    last_running: Option<Status>,
    /// The skill accepted or started whose end (its event, or one made from its result) has not
    /// come yet.
    open: Option<u64>,
}

impl Ends {
    /// A step's status.
    pub fn on_status(&mut self, st: &Status) {
        if st.id.is_some() {
            self.last_running = Some(st.clone());
        }
    }

    /// A skill was accepted: it is open until its end comes.
    pub fn accepted(&mut self, id: Option<u64>) {
        self.open = id;
    }

    /// The skill whose end has not come yet, if any.
    pub fn open(&self) -> Option<u64> {
        self.open
    }

    /// Takes a step's events; drops the `skill_ended` of a skill whose end was already made.
    pub fn filter_events(&mut self, events: &mut Vec<SkillEvent>) {
        events.retain(|e| match (e.name, e.id) {
            (EventName::SkillEnded, Some(id)) => self.ended.insert(id),
            _ => true,
        });
        for e in events.iter() {
            match e.name {
                EventName::SkillStarted => self.open = e.id,
                EventName::SkillEnded if e.id == self.open => self.open = None,
                _ => {}
            }
        }
    }

    /// A result came after the step `after_seq`. Results of no skill (a `stop`, a goal cancelled
    /// before its skill ran: skill id 0) and of skills already ended are dropped.
    pub fn on_result(&mut self, done: SkillDone, after_seq: u64) {
        if done.skill_id != 0 && !self.ended.contains(&done.skill_id) {
            self.pending.push(Pending { done, after_seq, due_t_s: None });
        }
    }

    /// After the step `seq` at mission time `t_s`: the ends made from results whose grace is over.
    pub fn after_step(&mut self, seq: u64, t_s: f64) -> Vec<SkillEvent> {
        let mut made = Vec::new();
        let ended = &mut self.ended;
        let last = &self.last_running;
        let open = &mut self.open;
        self.pending.retain_mut(|p| {
            if ended.contains(&p.done.skill_id) {
                return false;
            }
            if seq <= p.after_seq {
                return true;
            }
            let due = *p.due_t_s.get_or_insert(t_s + RESULT_GRACE_S);
            if t_s + 1e-9 < due {
                return true;
            }
            ended.insert(p.done.skill_id);
            if *open == Some(p.done.skill_id) {
                *open = None;
            }
            made.push(end_of(&p.done, t_s, last.as_ref().filter(|s| s.id == Some(p.done.skill_id))));
            false
        });
        made
    }

    /// Results still waiting for their event.
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }
}

/// The `skill_ended` of a result: its code (a cancelled goal without one: `stopped`), its cause,
/// and the skill's last known target and progress.
fn end_of(done: &SkillDone, t_s: f64, last: Option<&Status>) -> SkillEvent {
    let code = ResultCode::parse(&done.code).unwrap_or(if done.code == "canceled" {
        ResultCode::Stopped
    } else {
        ResultCode::Failed
    });
    let detail = match last.and_then(|s| s.target.clone().map(|t| (t, s))) {
        Some((target, s)) => EventDetail::Ended {
            target,
            progress: s.progress,
            remaining_m: s.remaining_m.unwrap_or(f64::NAN),
        },
        None => EventDetail::None {},
    };
    SkillEvent {
        t_s,
        name: EventName::SkillEnded,
        id: Some(done.skill_id),
        skill: last.and_then(|s| s.skill),
        code: Some(code),
        cause: Some(done.cause.clone()),
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acres_vehicle::{SkillKind, SkillState};

    fn done(skill_id: u64) -> SkillDone {
        SkillDone { id: 1, skill_id, code: "succeeded".into(), cause: "arrived at F53".into() }
    }

    fn ended(id: u64) -> SkillEvent {
        SkillEvent {
            t_s: 3.0,
            name: EventName::SkillEnded,
            id: Some(id),
            skill: Some(SkillKind::Goto),
            code: Some(ResultCode::Succeeded),
            cause: None,
            detail: EventDetail::None {},
        }
    }

    fn running(id: u64) -> Status {
        Status {
            skill: Some(SkillKind::Goto),
            id: Some(id),
            state: SkillState::Running,
            progress: 0.9,
            target: Some("F53".into()),
            remaining_m: Some(4.5),
            hold_since_s: None,
            interrupted: None,
            coverage: Default::default(),
            scouted: Vec::new(),
        }
    }

    #[test]
    fn a_result_without_its_event_ends_the_skill_after_the_grace_once() {
        let mut e = Ends::default();
        e.on_status(&running(7));
        e.on_result(done(7), 10);
        assert!(e.after_step(10, 5.0).is_empty(), "a step from before the result");
        assert!(e.after_step(11, 5.05).is_empty(), "the grace starts");
        assert!(e.after_step(20, 5.05 + RESULT_GRACE_S - 0.1).is_empty());
        let made = e.after_step(31, 5.05 + RESULT_GRACE_S);
        assert_eq!(made.len(), 1);
        let m = &made[0];
        assert_eq!(
            (m.name, m.id, m.skill, m.code),
            (EventName::SkillEnded, Some(7), Some(SkillKind::Goto), Some(ResultCode::Succeeded))
        );
        assert_eq!(m.cause.as_deref(), Some("arrived at F53"));
        assert!(matches!(&m.detail, EventDetail::Ended { target, .. } if target == "F53"));
        // The event that comes late is dropped; nothing more is made.
        let mut late = vec![ended(7)];
        e.filter_events(&mut late);
        assert!(late.is_empty());
        assert!(e.after_step(40, 9.0).is_empty());
        assert_eq!(e.waiting(), 0);
    }

    #[test]
    fn an_event_in_time_makes_nothing_and_a_result_after_its_event_is_dropped() {
        let mut e = Ends::default();
        e.on_result(done(3), 4);
        let mut evs = vec![ended(3)];
        e.filter_events(&mut evs);
        assert_eq!(evs.len(), 1, "the first end of a skill goes to the loop");
        assert!(e.after_step(5, 1.0).is_empty());
        assert!(e.after_step(50, 10.0).is_empty());
        e.on_result(done(3), 60);
        assert_eq!(e.waiting(), 0, "a result after its event waits for nothing");
        e.on_result(done(0), 60);
        assert_eq!(e.waiting(), 0, "a result of no skill (stop) is dropped");
    }

    #[test]
    fn a_cancelled_goal_without_a_code_ends_stopped() {
        let mut e = Ends::default();
        e.on_result(SkillDone { id: 2, skill_id: 9, code: "canceled".into(), cause: "cancelled".into() }, 0);
        let made = e.after_step(1, 0.0);
        assert!(made.is_empty());
        let made = e.after_step(2, RESULT_GRACE_S);
        assert_eq!(made[0].code, Some(ResultCode::Stopped));
        assert!(matches!(made[0].detail, EventDetail::None {}), "no status of skill 9 was seen");
    }
}
