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
//! Events ([`SkillEvent`]): `skill_started`, `skill_ended`, `skill_rejected`, `shield_hold`,
//! `shield_release`, `field_scouted`. A field counts as scouted when a scout has driven 98 % of
//! its Scout loop (coverage is kept across stop and resume).

use std::collections::BTreeMap;
use std::sync::Arc;

use acres_farm::geom::{point_in_polygon, polygon_boundary_distance, Polyline, Pose, Vec2};
use acres_farm::route::{scout_path, LaneGraph};
use acres_farm::Map;

use crate::follower::{Follower, Twist};
use crate::shield::{Shield, Verdict};
use crate::trajectory::check_route;

mod types;

pub use types::{
    EventDetail, EventName, Observation, Reply, ResultCode, ServerOptions, SkillEvent, SkillKind,
    SkillRequest, SkillState, Status,
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
        }
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
        let (skill, id, state, progress, target, remaining, hold) = match &self.running {
            None => (None, None, SkillState::Idle, 0.0, None, None, None),
            Some(r) => match &r.active {
                Active::Wait { .. } => (Some(r.kind), Some(r.id), SkillState::Waiting, 0.0, None, None, None),
                Active::Motion(m) => (
                    Some(r.kind),
                    Some(r.id),
                    if m.hold_since.is_some() { SkillState::Holding } else { SkillState::Running },
                    m.follower.progress(),
                    Some(m.target.clone()),
                    Some(m.follower.remaining_m()),
                    m.hold_since,
                ),
            },
        };
        Status {
            skill,
            id,
            state,
            progress,
            target,
            remaining_m: remaining,
            hold_since_s: hold,
            interrupted: self.interrupted.as_ref().map(|(k, id, m)| (*k, *id, m.target.clone())),
            coverage: self.coverage.clone(),
            scouted: self.scouted.clone(),
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

    /// Handles a request at the observed state.
    pub fn request(&mut self, req: &SkillRequest, obs: &Observation) -> Reply {
        self.t_s = obs.t_s;
        let Some(kind) = req.skill else {
            return self.reject(None, "no skill named".into());
        };
        if let Some(c) = req.speed_cap_mps {
            if !(c.is_finite() && c > 0.0) {
                return self.reject(Some(kind), format!("speed_cap_mps must be a positive number, not {c}"));
            }
        }
        if kind == SkillKind::Stop {
            return self.stop(obs);
        }
        if let Some(r) = &self.running {
            let cause = format!("busy: {} #{} is running; stop it first", r.kind.as_str(), r.id);
            return self.reject(Some(kind), cause);
        }
        match kind {
            SkillKind::Wait => match req.seconds {
                Some(s) if s.is_finite() && s > 0.0 => {
                    let id = self.start_id();
                    self.running = Some(Running { id, kind, active: Active::Wait { until_s: obs.t_s + s } });
                    self.event(
                        EventName::SkillStarted,
                        Some(id),
                        Some(kind),
                        None,
                        None,
                        EventDetail::Wait { seconds: s },
                    );
                    Reply::started(kind, id, None, None)
                }
                other => self.reject(Some(kind), format!("wait needs seconds > 0, got {other:?}")),
            },
            SkillKind::Goto | SkillKind::ReturnHome => {
                let place = if kind == SkillKind::ReturnHome {
                    "H".to_string()
                } else {
                    match (&req.field, &req.place) {
                        (Some(f), _) => f.clone(),
                        (None, Some(p)) => p.clone(),
                        (None, None) => {
                            return self.reject(Some(kind), "goto needs a field or a place".into())
                        }
                    }
                };
                let node = if place == "H" || self.map.nodes.contains_key(&place) {
                    place.clone()
                } else if let Some(f) = self.map.fields.get(&place) {
                    f.entry.clone()
                } else {
                    let fields: Vec<&str> = self.map.fields.keys().map(String::as_str).collect();
                    return self.reject(
                        Some(kind),
                        format!(
                            "unknown place \"{place}\"; places are H, the fields ({}) and lane nodes",
                            fields.join(", ")
                        ),
                    );
                };
                let Some(route) = self.route_to(obs.pose.pos(), &node) else {
                    return self.reject(Some(kind), format!("no route to {place}"));
                };
                self.start_motion(kind, route, 0.0, req.speed_cap_mps, place, None, None)
            }
            SkillKind::Scout => {
                let Some(field) = req.field.clone().or_else(|| req.place.clone()) else {
                    return self.reject(Some(kind), "scout needs a field".into());
                };
                let Some(f) = self.map.fields.get(&field) else {
                    return self.reject(Some(kind), format!("unknown field \"{field}\""));
                };
                let d = f.entry_pos.dist(obs.pose.pos());
                if d > self.opts.entry_tolerance_m {
                    return self.reject(
                        Some(kind),
                        format!("not at the entry of {field} ({d:.0} m away); goto {field} first"),
                    );
                }
                let path = scout_path(&self.map, &field).expect("the field exists");
                // The loop starts after the entry-to-loop connector (which may be empty).
                let c0 = f.entry_pos.dist(f.scout_loop[0]);
                let span = (c0, c0 + f.loop_length_m());
                let mut pts = vec![obs.pose.pos()];
                pts.extend(path.points.iter().copied());
                let route = Polyline::new(pts);
                let shift = route.length_m() - path.length_m();
                self.start_motion(
                    kind,
                    route,
                    0.0,
                    req.speed_cap_mps,
                    field.clone(),
                    Some(field),
                    Some((span.0 + shift, span.1 + shift)),
                )
            }
            SkillKind::Resume => {
                let Some((k, old_id, mut m)) = self.interrupted.take() else {
                    return self.reject(Some(kind), "nothing to resume".into());
                };
                let (_, d) = m.follower.path.project_window(
                    obs.pose.pos(),
                    m.follower.s_m - 5.0,
                    m.follower.s_m + 5.0,
                );
                if d > self.opts.max_track_error_m {
                    let cause =
                        format!("the vehicle is {d:.0} m from where {} #{old_id} stopped", k.as_str());
                    self.interrupted = Some((k, old_id, m));
                    return self.reject(Some(kind), cause);
                }
                if req.speed_cap_mps.is_some() {
                    m.cap_mps = req.speed_cap_mps;
                }
                m.hold_since = None;
                m.best_t = obs.t_s;
                m.tracking = false;
                let id = self.start_id();
                let detail = EventDetail::Resumed {
                    resumes: old_id,
                    target: m.target.clone(),
                    remaining_m: m.follower.remaining_m(),
                };
                let route_m = m.follower.remaining_m();
                self.shield.reset();
                self.running = Some(Running { id, kind: k, active: Active::Motion(Box::new(m)) });
                self.event(EventName::SkillStarted, Some(id), Some(k), None, None, detail);
                Reply::started(k, id, Some(route_m), Some(format!("resumes #{old_id}")))
            }
            SkillKind::Stop => unreachable!("handled above"),
        }
    }

    fn start_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A route from a point to a node: via the field's entry when the point is in a field.
    fn route_to(&self, p: Vec2, node: &str) -> Option<Polyline> {
        let in_field = self.map.fields.values().find(|f| {
            (point_in_polygon(p, &f.polygon)
                || polygon_boundary_distance(p, &f.polygon) <= self.map.field_margin_m)
                && f.entry_pos.dist(p) > 0.5
        });
        match in_field {
            Some(f) => {
                let rest = self.graph.route_nodes(&f.entry, node)?;
                let mut pts = vec![p];
                pts.extend(rest.points);
                Some(Polyline::new(pts))
            }
            None => self.graph.route_from_point(p, node),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn start_motion(
        &mut self,
        kind: SkillKind,
        route: Polyline,
        s_m: f64,
        cap_mps: Option<f64>,
        target: String,
        field: Option<String>,
        loop_span: Option<(f64, f64)>,
    ) -> Reply {
        if let Err(cause) = check_route(&self.map, &route) {
            return self.reject(Some(kind), cause);
        }
        let id = self.start_id();
        let route_m = route.length_m();
        let follower = Follower::new(route, s_m, self.opts.follower);
        self.interrupted = None;
        self.shield.reset();
        let m = Motion {
            follower,
            cap_mps,
            target: target.clone(),
            field,
            loop_span,
            hold_since: None,
            best_s: s_m,
            best_t: self.t_s,
            tracking: false,
        };
        self.running = Some(Running { id, kind, active: Active::Motion(Box::new(m)) });
        self.event(
            EventName::SkillStarted,
            Some(id),
            Some(kind),
            None,
            None,
            EventDetail::Route { target, route_m },
        );
        Reply::started(kind, id, Some(route_m), None)
    }

    fn stop(&mut self, obs: &Observation) -> Reply {
        match self.running.take() {
            None => Reply {
                accepted: true,
                skill: Some(SkillKind::Stop),
                id: None,
                code: None,
                cause: Some("no skill was running".into()),
                route_m: None,
            },
            Some(r) => {
                let cause = format!("{} #{} stopped on request", r.kind.as_str(), r.id);
                self.finish(r, ResultCode::Stopped, "stop requested".into(), obs.t_s);
                Reply {
                    accepted: true,
                    skill: Some(SkillKind::Stop),
                    id: None,
                    code: None,
                    cause: Some(cause),
                    route_m: None,
                }
            }
        }
    }

    fn finish(&mut self, r: Running, code: ResultCode, cause: String, t_s: f64) {
        self.t_s = t_s;
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
            if matches!(code, ResultCode::Stopped | ResultCode::Blocked) {
                self.interrupted = Some((r.kind, r.id, *m));
            }
        }
        self.event(EventName::SkillEnded, Some(r.id), Some(r.kind), Some(code), Some(cause), detail);
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

    /// One control step: advances the running skill and returns the drive command (after the
    /// shield).
    pub fn control(&mut self, obs: &Observation) -> Twist {
        self.t_s = obs.t_s;
        let Some(mut r) = self.running.take() else {
            return Twist::default();
        };
        let mut ended: Option<(ResultCode, String)> = None;
        let mut out = Twist::default();
        let mut scouted_now: Option<String> = None;
        let mut shield_event: Option<(EventName, EventDetail)> = None;
        match &mut r.active {
            Active::Wait { until_s } => {
                if obs.t_s + 1e-9 >= *until_s {
                    ended = Some((ResultCode::Succeeded, "waited".into()));
                }
            }
            Active::Motion(m) => {
                let off = m.follower.track(&obs.pose);
                if off < TRACKING_M && aligned(&m.follower, &obs.pose) {
                    m.tracking = true;
                }
                if let (Some(field), Some((a, b))) = (&m.field, m.loop_span) {
                    let c = ((m.follower.s_m - a) / (b - a)).clamp(0.0, 1.0);
                    let e = self.coverage.entry(field.clone()).or_insert(0.0);
                    if c > *e {
                        *e = c;
                    }
                    if *e >= 0.98 && !self.scouted.contains(field) {
                        scouted_now = Some(field.clone());
                    }
                }
                if m.follower.s_m > m.best_s + 0.5 {
                    m.best_s = m.follower.s_m;
                    m.best_t = obs.t_s;
                }
                if m.follower.arrived() {
                    if obs.speed_mps < 0.05 {
                        ended = Some((ResultCode::Succeeded, format!("arrived at {}", m.target)));
                    }
                } else if off > self.opts.max_track_error_m && m.tracking && aligned(&m.follower, &obs.pose) {
                    ended = Some((ResultCode::Failed, format!("left the route: {off:.1} m off")));
                } else {
                    let cmd =
                        m.follower.command(&self.map, &obs.pose, obs.speed_mps, self.opts.limits, m.cap_mps);
                    match self.shield.check(cmd, obs.speed_mps, self.ahead_m) {
                        Verdict::Pass => {
                            if let Some(since) = m.hold_since.take() {
                                shield_event = Some((
                                    EventName::ShieldRelease,
                                    EventDetail::Release {
                                        held_s: obs.t_s - since,
                                        ahead_m: finite(self.ahead_m),
                                        why: None,
                                    },
                                ));
                            }
                            out = cmd;
                            if obs.t_s - m.best_t > self.opts.stall_s {
                                ended = Some((
                                    ResultCode::Failed,
                                    format!("no progress for {:.0} s", self.opts.stall_s),
                                ));
                            }
                        }
                        Verdict::Hold { ahead_m, stopping_m } => {
                            m.best_t = obs.t_s;
                            match m.hold_since {
                                None => {
                                    m.hold_since = Some(obs.t_s);
                                    let at =
                                        obs.pose.to_map(Vec2::new(ahead_m + self.opts.sensor_forward_m, 0.0));
                                    shield_event = Some((
                                        EventName::ShieldHold,
                                        EventDetail::Hold { ahead_m, stopping_m, x: at.x, y: at.y },
                                    ));
                                }
                                Some(since) if obs.t_s - since >= self.opts.blocked_s => {
                                    ended = Some((
                                        ResultCode::Blocked,
                                        format!("the shield held the vehicle for {:.0} s: obstacle {ahead_m:.1} m ahead", self.opts.blocked_s),
                                    ));
                                }
                                Some(_) => {}
                            }
                        }
                    }
                }
            }
        }
        if let Some((name, detail)) = shield_event {
            self.event(name, Some(r.id), Some(r.kind), None, None, detail);
        }
        if let Some(f) = scouted_now {
            self.scouted.push(f.clone());
            self.event(
                EventName::FieldScouted,
                Some(r.id),
                Some(r.kind),
                None,
                None,
                EventDetail::Scouted { field: f },
            );
        }
        match ended {
            Some((code, cause)) => {
                self.finish(r, code, cause, obs.t_s);
                Twist::default()
            }
            None => {
                self.running = Some(r);
                out
            }
        }
    }
}

/// A motion is on its route once the vehicle is this near it, heading along it, m.
const TRACKING_M: f64 = 2.0;

/// True when the vehicle heads along the path (within 45°): a large cross-track error then means
/// it drifted off, not that it is still turning onto the route.
fn aligned(f: &Follower, pose: &Pose) -> bool {
    let d = acres_farm::geom::wrap_angle(pose.yaw - f.path.yaw_at(f.s_m));
    d.abs() < std::f64::consts::FRAC_PI_4
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}
