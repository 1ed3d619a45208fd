//! The classical rule set (mode `classical`): no model and no tools. The mission planner of the
//! run-time library orders the fields and removes one at a time while the planned time or energy
//! is above the deadline or the fuel limit; the skills drive that order. Rules:
//!
//! - after `goto F` succeeded: `scout F`; after `scout F`: the next field, or `return_home`;
//! - before each next field: skip it when the planned time of going there, scouting it and
//!   returning home would pass the deadline;
//! - returns of the LiDAR on the route ahead (the knowledge store, as in the vehicle profile):
//!   `stop`, then `wait` 30 s; a skill that ended `blocked`: `wait` 30 s. After each wait: when
//!   the route is clear, `resume`; else wait again, and skip the field once it has waited 120 s
//!   (a `return_home` is waited for without end);
//! - a skill that `failed` or was `rejected`: skip the field;
//! - an operator request that says "home": come home after the current field ("now" or
//!   "immediately": stop and come home at once).
//!
//! Recovery interface: with `recovery.mode = "menu"`, the planner gets a `stuck` wake-up when the
//! shield has held the vehicle for `hold_s`, with [`RECOVERY_OPTIONS`]; it answers with its
//! tools. After `stuck_wake_ups` such wake-ups the classical rules decide: the vehicle keeps
//! waiting, and the skill server ends the skill `blocked` after `blocked_s` (a `skill_ended`
//! wake-up follows).

use serde_json::json;

use crate::planners::planning::mission::plan_within_limits;
use acres_vehicle::{ResultCode, SkillEvent, SkillKind, SkillRequest};

use super::Loop;
use crate::clock::wall_now;
use crate::planners::wake::Wake;
use crate::runfolder::rows::{EventRow, PlanCheckRow, PlanSource, Row, WakeReason};
use crate::tools::state::RunState;

/// The options of a `stuck` wake-up, as the planner reads them.
pub const RECOVERY_OPTIONS: [&str; 4] = [
    "wait: do nothing now; the shield releases when the way is clear, and the skill ends blocked after blocked_s",
    "stop_and_wait: dispatch stop, then wait {seconds}, then resume",
    "skip_field: dispatch stop, then goto the next field (in checked mode plan without this field first)",
    "return_home: dispatch stop, then return_home",
];

/// One wait before looking at the route again, s.
pub const RETRY_WAIT_S: f64 = 30.0;
use crate::planners::planning::GIVE_UP_S;

#[derive(Debug, Clone, PartialEq, Default)]
enum Phase {
    #[default]
    Start,
    Goto(String),
    Scout(String),
    Return,
    Waiting(Box<Phase>, f64),
    Done,
}

/// The classical driver's state.
#[derive(Debug, Default)]
pub struct Classical {
    order: Vec<String>,
    idx: usize,
    phase: Phase,
    returns: bool,
    home_after: bool,
    home_now: bool,
    ended: Option<SkillEvent>,
}

impl Classical {
    /// The rule set has nothing more to do.
    pub fn finished(&self) -> bool {
        self.phase == Phase::Done && self.ended.is_none() && !self.home_now
    }

    /// The start wake-up: plan, then the first skill.
    pub fn on_wake(&mut self, st: &mut RunState, w: &Wake) {
        if w.reason() != WakeReason::Start || self.phase != Phase::Start {
            return;
        }
        let plan = plan_within_limits(&st.sc.fields, &st.costs.table, st.sc.deadline_s, st.sc.fuel_limit_mj);
        match plan {
            Ok(p) => {
                for f in &p.removed {
                    st.mission.removed.insert(f.clone());
                }
                let t = st.t();
                st.log(Row::PlanCheck(PlanCheckRow {
                    t,
                    wall: wall_now(),
                    visits: p.order.clone(),
                    return_home: true,
                    accepted: true,
                    source: PlanSource::PlanChecker,
                    reason: None,
                    counterexample: None,
                    planned_time_s: Some(p.cost.planned_time_s),
                    planned_energy_mj: Some(p.cost.planned_energy_mj),
                }));
                self.order = p.order;
            }
            Err(e) => {
                log_rule(st, &format!("no plan: {e}"));
            }
        }
        self.next_field(st);
    }

    /// A skill ended (acted on by [`Classical::act`]).
    pub fn on_skill_ended(&mut self, e: &SkillEvent) {
        self.ended = Some(e.clone());
    }

    /// The LiDAR returned points on the route ahead (new knowledge-store places).
    pub fn on_returns_on_route(&mut self) {
        self.returns = true;
    }

    /// An operator request.
    pub fn on_request(&mut self, text: &str) {
        let t = text.to_lowercase();
        if t.contains("home") {
            if t.contains("now") || t.contains("immediately") {
                self.home_now = true;
            } else {
                self.home_after = true;
            }
        }
    }

    /// Acts on what happened since the last call.
    pub fn act(&mut self, st: &mut RunState) {
        if self.home_now {
            self.home_now = false;
            if st.port().status_ref().skill.is_some() {
                // The stop's skill_ended (code stopped) changes nothing below.
                st.port_mut().request(&SkillRequest::new(SkillKind::Stop));
            }
            self.ended = None;
            self.go_home(st);
            return;
        }
        if std::mem::take(&mut self.returns)
            && matches!(self.phase, Phase::Goto(_) | Phase::Scout(_) | Phase::Return)
            && st.port().status_ref().skill.is_some()
        {
            log_rule(st, &format!("returns on the route: stop, wait {RETRY_WAIT_S} s"));
            st.port_mut().request(&SkillRequest::new(SkillKind::Stop));
            let inner = std::mem::take(&mut self.phase);
            self.phase = Phase::Waiting(Box::new(inner), RETRY_WAIT_S);
            self.dispatch(st, SkillRequest::new(SkillKind::Wait).seconds(RETRY_WAIT_S));
            // The stop's skill_ended (code stopped) changes nothing below.
            return;
        }
        let Some(e) = self.ended.take() else { return };
        let code = e.code.unwrap_or(ResultCode::Failed);
        let phase = std::mem::take(&mut self.phase);
        match (phase, code) {
            (Phase::Waiting(inner, waited), ResultCode::Succeeded) => {
                let clear = st.memory.knowledge.on_route(&st.port().route_ahead()).is_empty();
                if clear {
                    let r = st.port_mut().request(&SkillRequest::new(SkillKind::Resume));
                    self.phase = *inner;
                    if !r.accepted {
                        log_rule(st, &format!("resume refused: {}", r.cause.unwrap_or_default()));
                        self.skip(st);
                    }
                } else if waited >= GIVE_UP_S && *inner != Phase::Return {
                    log_rule(st, &format!("the route stayed blocked for {waited:.0} s: skip"));
                    self.phase = *inner;
                    self.skip(st);
                } else {
                    self.phase = Phase::Waiting(inner, waited + RETRY_WAIT_S);
                    self.dispatch(st, SkillRequest::new(SkillKind::Wait).seconds(RETRY_WAIT_S));
                }
            }
            (Phase::Goto(f), ResultCode::Succeeded) => {
                self.phase = Phase::Scout(f.clone());
                self.dispatch(st, SkillRequest::new(SkillKind::Scout).field(&f));
            }
            (Phase::Scout(_), ResultCode::Succeeded) => {
                self.idx += 1;
                self.next_field(st);
            }
            (Phase::Return, ResultCode::Succeeded) => self.phase = Phase::Done,
            (p @ (Phase::Goto(_) | Phase::Scout(_) | Phase::Return), ResultCode::Blocked) => {
                log_rule(st, &format!("blocked: wait {RETRY_WAIT_S} s, then look at the route"));
                self.phase = Phase::Waiting(Box::new(p), RETRY_WAIT_S);
                self.dispatch(st, SkillRequest::new(SkillKind::Wait).seconds(RETRY_WAIT_S));
            }
            (p, ResultCode::Stopped) => self.phase = p,
            (p, _) => {
                self.phase = p;
                self.skip(st);
            }
        }
    }

    fn skip(&mut self, st: &mut RunState) {
        match &self.phase {
            Phase::Return => self.go_home(st),
            _ => {
                if let Some(f) = self.order.get(self.idx) {
                    st.mission.removed.insert(f.clone());
                }
                self.idx += 1;
                self.next_field(st);
            }
        }
    }

    fn next_field(&mut self, st: &mut RunState) {
        while !self.home_after {
            let Some(f) = self.order.get(self.idx).cloned() else { break };
            if let (Some(d), Ok(legs)) = (st.sc.deadline_s, st.estimate(std::slice::from_ref(&f), true)) {
                let need: f64 = legs.iter().map(|l| l.planned_time_s).sum();
                if st.t() + need > d {
                    log_rule(st, &format!("skip {f}: planned {need:.0} s would pass the deadline"));
                    st.mission.removed.insert(f);
                    self.idx += 1;
                    continue;
                }
            }
            self.phase = Phase::Goto(f.clone());
            self.dispatch(st, SkillRequest::new(SkillKind::Goto).field(&f));
            return;
        }
        self.go_home(st);
    }

    fn go_home(&mut self, st: &mut RunState) {
        self.phase = Phase::Return;
        self.dispatch(st, SkillRequest::new(SkillKind::ReturnHome));
    }

    fn dispatch(&mut self, st: &mut RunState, req: SkillRequest) {
        let r = st.port_mut().request(&req);
        if !r.accepted {
            let code = acres_vehicle::ResultCode::Rejected;
            let why =
                format!("{} refused: {}", req.skill.map_or("?", |s| s.as_str()), r.cause.unwrap_or_default());
            log_rule_coded(st, &why, Some(code));
            if self.phase == Phase::Return {
                self.phase = Phase::Done;
            } else {
                self.skip(st);
            }
        }
    }
}

fn log_rule(st: &mut RunState, text: &str) {
    log_rule_coded(st, text, None);
}

/// A `classical_rule` event row; `code`: the result code of a refused request the rule made (the
/// score counts it from the row).
fn log_rule_coded(st: &mut RunState, text: &str, code: Option<acres_vehicle::ResultCode>) {
    let t = st.t();
    st.log(Row::Event(EventRow {
        t,
        wall: wall_now(),
        name: "classical_rule".into(),
        skill: None,
        code: code.map(|c| c.as_str().into()),
        cause: Some(text.into()),
        detail: serde_json::Map::new(),
    }));
    st.remember_event(json!({"t_s": t, "name": "classical_rule", "cause": text}));
}

impl Loop<'_> {
    /// The classical rules take over a stuck vehicle after the planner's stuck wake-ups: the
    /// vehicle keeps waiting; the skill ends blocked after blocked_s.
    pub(crate) fn classical_recovery(&mut self) {
        log_rule(
            &mut self.st,
            "stuck_wake_ups used: the classical rules decide (wait; the skill ends blocked after blocked_s)",
        );
    }

    /// Lets the classical driver act.
    pub(crate) fn classical_act(&mut self) {
        if let Some(c) = self.classical.as_mut() {
            c.act(&mut self.st);
        }
    }
}
