//! The skill server: one skill at a time, each a bounded execution that ends with a result code
//! and a cause, and timestamped events.
//!
//! | skill | arguments | does |
//! | --- | --- | --- |
//! | `goto` | `field` (its entry) or `place` (`H`, a field, a lane node) | drives the lanes there |
//! | `scout` | `field` | from the field's entry once around its Scout loop and back to the entry |
//! | `return_home` | | drives home |
//! | `wait` | `seconds` | stands still |
//! | `stop` | | ends the running skill with `stopped`; the vehicle brakes |
//! | `resume` | | continues the last `stopped` or `blocked` motion where it stopped |
//!
//! `goto`, `scout`, `return_home` and `resume` take `speed_cap_mps`.
//!
//! Result codes ([`ResultCode`]): `succeeded`; `stopped` (a `stop` ended it); `blocked` (the shield
//! held the vehicle for `blocked_s` without a break); `failed` (the vehicle, once it has been on
//! its route — within 2 m, heading along it — is more than `max_track_error_m` off it while
//! heading along it, or made no progress for `stall_s` while not held); `rejected` (the request
//! was refused: busy, unknown place, not at the field's entry, a route that would leave
//! the corridor, bad arguments) — a rejected request never starts.
//!
//! Learned skills (the scenario's `skills`, [`crate::learned`]) run as `learned` motions with
//! their own ends: `timeout` (`max_s` passed), `region_exit` (left the scope), `reactive_fault`
//! (the policy failed or ran over its per-tick budget); a command out of the vehicle's limits
//! is refused by the shield and ends the skill `failed` (learned.rs).
//!
//! Events ([`SkillEvent`]): `skill_started`, `skill_ended`, `skill_rejected`, `shield_hold`,
//! `shield_release`, `field_scouted`; on the vehicle node also `link_hold` and `link_release`
//! (the heartbeats stopped and returned: link.rs). A field counts as scouted when a scout has driven 98 % of
//! its Scout loop (coverage is kept across stop and resume).

use std::collections::BTreeMap;
use std::sync::Arc;

use acres_farm::geom::Vec2;
use acres_farm::route::LaneGraph;
use acres_farm::Map;

use crate::follower::Follower;
use crate::learned::LearnedSkill;
use crate::local_planner::{Builtin, LocalPlanner, LocalPlannerFactory, PlanStart};
use crate::shield::Shield;

mod control;
mod learned;
mod link;
mod request;
mod types;

pub use types::{
    EventDetail, EventName, Observation, Reply, ResultCode, ServerOptions, SkillEvent, SkillKind,
    SkillRequest, SkillState, Status, StatusRef,
};

#[derive(Debug, Clone)]
struct Motion {
    follower: Follower,
    cap_mps: Option<f64>,
    target: String,
    field: Option<String>,
    loop_span: Option<(f64, f64)>,
    hold_since: Option<f64>,
    best_s: f64,
    best_t: f64,
    /// The vehicle has been on its route (within 2 m, heading along it) since the start.
    tracking: bool,
    /// The learned skill that drives this motion (none: the built-in follower).
    learned: Option<Box<learned::LearnedRun>>,
}

#[derive(Debug, Clone)]
enum Active {
    Motion(Box<Motion>),
    Wait { until_s: f64 },
}

#[derive(Debug, Clone)]
struct Running {
    id: u64,
    kind: SkillKind,
    active: Active,
}

/// The skill server.
#[derive(Debug)]
pub struct SkillServer {
    map: Arc<Map>,
    graph: LaneGraph,
    opts: ServerOptions,
    shield: Shield,
    running: Option<Running>,
    interrupted: Option<(SkillKind, u64, Motion)>,
    events: Vec<SkillEvent>,
    coverage: BTreeMap<String, f64>,
    scouted: Vec<String>,
    ahead_m: f64,
    next_id: u64,
    t_s: f64,
    /// Changes with anything of the status but its numbers ([`StatusRef::revision`]): bumped
    /// by every event, every request and every new coverage entry.
    revision: u64,
    /// Makes the local planner (`default` unless [`SkillServer::set_local_planner`]).
    planners: Arc<dyn LocalPlannerFactory>,
    /// The local planner, made at the first motion (again after a fault).
    planner: Option<Box<dyn LocalPlanner>>,
    /// The scenario's learned skills ([`SkillServer::add_learned`]).
    learned: Vec<Arc<LearnedSkill>>,
    /// Since when the link hold holds the running skill (link.rs; never in the in-process world).
    link_hold_since: Option<f64>,
}

impl SkillServer {
    /// A server for a map.
    pub fn new(map: Arc<Map>, opts: ServerOptions) -> Self {
        let graph = LaneGraph::new(&map);
        Self {
            map,
            graph,
            shield: Shield::new(opts.shield),
            opts,
            running: None,
            interrupted: None,
            events: Vec::new(),
            coverage: BTreeMap::new(),
            scouted: Vec::new(),
            ahead_m: f64::INFINITY,
            next_id: 1,
            t_s: 0.0,
            revision: 0,
            planners: Builtin::Default.factory(),
            planner: None,
            learned: Vec::new(),
            link_hold_since: None,
        }
    }

    /// Drives motions with the local planners of `factory` from the next motion on (the
    /// scenario's `local_planner`; [`crate::local_planner`]).
    pub fn set_local_planner(&mut self, factory: Arc<dyn LocalPlannerFactory>) {
        self.planners = factory;
        self.planner = None;
    }

    /// The name of the local planner in use.
    pub fn local_planner_name(&self) -> &str {
        self.planners.name()
    }

    /// Adds learned skills (the scenario's, loaded once by [`crate::learned::scenario_skills`]).
    pub fn add_learned(&mut self, skills: impl IntoIterator<Item = Arc<LearnedSkill>>) {
        self.learned.extend(skills);
    }

    /// The learned skills this server runs.
    pub fn learned(&self) -> &[Arc<LearnedSkill>] {
        &self.learned
    }

    /// The options.
    pub fn options(&self) -> &ServerOptions {
        &self.opts
    }

    /// The shield (for its rules).
    pub fn shield(&self) -> &Shield {
        &self.shield
    }

    /// The obstacle distance ahead from the latest scan, m.
    pub fn ahead_m(&self) -> f64 {
        self.ahead_m
    }

    /// Takes the obstacle distance ahead of a new scan.
    pub fn on_scan(&mut self, ahead_m: f32) {
        self.ahead_m = f64::from(ahead_m);
    }

    /// Takes the events since the last call.
    pub fn drain_events(&mut self) -> Vec<SkillEvent> {
        std::mem::take(&mut self.events)
    }

    /// True while a skill runs.
    pub fn busy(&self) -> bool {
        self.running.is_some()
    }

    /// The route still ahead of the running motion, or else (nothing or a wait runs) of the
    /// interrupted one that `resume` would continue; empty when neither.
    pub fn route_ahead(&self) -> Vec<Vec2> {
        let m = match (&self.running, &self.interrupted) {
            (Some(Running { active: Active::Motion(m), .. }), _) => m,
            // A wait (or nothing) runs: the stopped motion's route is still the way ahead.
            (_, Some((_, _, m))) => m,
            _ => return Vec::new(),
        };
        let f = &m.follower;
        let mut pts = vec![f.path.point_at(f.s_m)];
        let i = f.path.segment_at(f.s_m);
        pts.extend(f.path.points[i + 1..].iter().copied());
        pts
    }

    /// The state for planners.
    pub fn status(&self) -> Status {
        self.status_ref().to_status()
    }

    /// The state for planners, borrowed.
    pub fn status_ref(&self) -> StatusRef<'_> {
        let (skill, id, state, progress, target, remaining, hold) = match &self.running {
            None => (None, None, SkillState::Idle, 0.0, None, None, None),
            Some(r) => match &r.active {
                Active::Wait { .. } => (Some(r.kind), Some(r.id), SkillState::Waiting, 0.0, None, None, None),
                Active::Motion(m) => (
                    Some(r.kind),
                    Some(r.id),
                    if m.hold_since.is_some() { SkillState::Holding } else { SkillState::Running },
                    m.follower.progress(),
                    Some(m.target.as_str()),
                    Some(m.follower.remaining_m()),
                    m.hold_since,
                ),
            },
        };
        StatusRef {
            skill,
            id,
            state,
            progress,
            target,
            remaining_m: remaining,
            hold_since_s: hold,
            interrupted: self.interrupted.as_ref().map(|(k, id, m)| (*k, *id, m.target.as_str())),
            coverage: &self.coverage,
            scouted: &self.scouted,
            revision: Some(self.revision),
        }
    }

    fn event(
        &mut self,
        name: EventName,
        id: Option<u64>,
        skill: Option<SkillKind>,
        code: Option<ResultCode>,
        cause: Option<String>,
        detail: EventDetail,
    ) {
        // Every change of the status but its numbers comes with an event, or with a request
        // or a new coverage entry (which bump it themselves).
        self.revision += 1;
        self.events.push(SkillEvent { t_s: self.t_s, name, id, skill, code, cause, detail });
    }

    fn reject(&mut self, skill: Option<SkillKind>, cause: String) -> Reply {
        self.event(
            EventName::SkillRejected,
            None,
            skill,
            Some(ResultCode::Rejected),
            Some(cause.clone()),
            EventDetail::None {},
        );
        Reply {
            accepted: false,
            skill,
            id: None,
            code: Some(ResultCode::Rejected),
            cause: Some(cause),
            route_m: None,
        }
    }

    fn finish(&mut self, r: Running, code: ResultCode, cause: String, t_s: f64) {
        self.t_s = t_s;
        self.link_release_at_end(r.id, r.kind, t_s);
        let mut detail = EventDetail::None {};
        if let Active::Motion(m) = r.active {
            if let Some(since) = m.hold_since {
                // The hold ends with the skill: every shield_hold has its shield_release.
                let held = EventDetail::Release {
                    held_s: t_s - since,
                    ahead_m: finite(self.ahead_m),
                    why: Some("the skill ended".into()),
                };
                self.event(EventName::ShieldRelease, Some(r.id), Some(r.kind), None, None, held);
            }
            detail = EventDetail::Ended {
                target: m.target.clone(),
                progress: m.follower.progress(),
                remaining_m: m.follower.remaining_m(),
            };
            if code == ResultCode::ReactiveFault {
                // A planner that faulted is not asked again: the next motion makes a new one.
                self.planner = None;
            } else if let Some(p) = self.planner.as_mut() {
                p.end(r.id, code);
            }
            if matches!(code, ResultCode::Stopped | ResultCode::Blocked) {
                self.interrupted = Some((r.kind, r.id, *m));
            }
        }
        self.event(EventName::SkillEnded, Some(r.id), Some(r.kind), Some(code), Some(cause), detail);
    }

    /// Tells the local planner that the running motion starts (or resumes); the planner is
    /// made first when there is none.
    fn start_planner(&mut self) {
        let Some(Running { id, kind, active: Active::Motion(m) }) = &self.running else {
            return;
        };
        let planner = match &mut self.planner {
            Some(p) => p,
            None => self.planner.insert(self.planners.make(&self.map, &self.opts.follower)),
        };
        planner.start(&PlanStart {
            id: *id,
            skill: *kind,
            target: &m.target,
            route: &m.follower.path,
            s_m: m.follower.s_m,
            limits: self.opts.limits,
            cap_mps: m.cap_mps,
            goal_tolerance_m: m.follower.params.goal_tolerance_m,
        });
    }

    /// Ends the running skill from outside the server (the vehicle node: odometry stopped, the
    /// heartbeat stopped) with `code` and `cause`; its events follow as for any end. Returns
    /// false when nothing ran.
    pub fn end_running(&mut self, code: ResultCode, cause: String, t_s: f64) -> bool {
        match self.running.take() {
            Some(r) => {
                self.finish(r, code, cause, t_s);
                true
            }
            None => false,
        }
    }
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}
