//! One control step of the loop: the world advances, and what happened becomes rows and wake-ups.

use serde_json::json;

use acres_vehicle::{EventDetail, EventName, ResultCode};

use super::Loop;
use crate::clock::wall_now;
use crate::planners::wake::{
    EventView, ModelErrorWake, ObjectWake, PeriodWake, PlanCell, RequestWake, ReturnsWake, StuckWake,
    TimerAtWake, Wake, WakeDetail,
};
use crate::runfolder::rows::{
    EndCode, EventRow, PoseRow, Profile, RequestRow, ReturnsOnRouteRow, Row, WakeReason,
};
use crate::runfolder::POSE_PERIOD_S;
use crate::scenario::{RecoveryMode, When};
use crate::world::knowledge::cell_center;

/// The reach of the sensors for `object_seen`, m.
pub const SENSOR_REACH_M: f64 = 30.0;
/// Distance a vehicle must drive within `stall_s` not to be stalled, m.
pub const STALL_MIN_M: f64 = 50.0;

impl Loop<'_> {
    /// Advances the world by `seconds` (a model call's latency), handling every step.
    pub(crate) fn advance(&mut self, seconds: f64) {
        let dt = self.st.port().dt_s();
        let steps = (seconds / dt).round() as u64;
        for _ in 0..steps {
            if self.end.is_some() {
                return;
            }
            self.step();
        }
    }

    /// One control step.
    pub(crate) fn step(&mut self) {
        let scan = self.st.port_mut().step();
        let stats = self.st.port_mut().link_stats();
        if let Some(cause) = self.st.port().lost() {
            if let Some(stats) = stats {
                self.log_link_stats(stats);
            }
            self.on_link_lost(cause);
            return;
        }
        self.safety_measured |= self.st.port_mut().measure_safety(&mut self.safety);
        let t = self.st.t();
        let v = self.st.port().vehicle();
        let pos = v.pose.pos();
        let d = pos.dist(self.progress.last_pos);
        self.st.add_energy_estimate(pos, d);
        self.progress.last_pos = pos;
        self.st.record_step(scan);
        // After the step's pose rows: a step that jumps (steps came late over the link) writes
        // the pose rows of the times it passed, and the stats row must not come before them.
        if let Some(stats) = stats {
            self.log_link_stats(stats);
        }
        let home = self.st.sc.map_data.home();
        if pos.dist(home) <= super::outcome::HOME_TOLERANCE_M && v.speed_mps < 0.2 {
            self.progress.home_since.get_or_insert(t);
        } else {
            self.progress.home_since = None;
        }
        while (self.seen.next_pose_n as f64) * POSE_PERIOD_S <= t + 1e-9 {
            self.log_pose();
        }
        for e in self.st.port_mut().drain_events() {
            self.on_event(e);
        }
        if scan {
            self.on_scan();
        }
        self.due_requests(t);
        if let Some(at) = self.st.mission.timer_s {
            if t + 1e-9 >= at {
                self.st.mission.timer_s = None;
                self.due.wakes.push_back(Wake::new(WakeDetail::TimerAt(TimerAtWake { timer_at_s: at })));
            }
        }
        if let Some(at) = self.due.next_periodic_s {
            if t + 1e-9 >= at {
                self.due.next_periodic_s = self.limits.wake_every_s.map(|p| at + p);
                self.due.wakes.push_back(Wake::new(WakeDetail::Period(PeriodWake {
                    period_s: self.limits.wake_every_s,
                })));
            }
        }
        if let Some(at) = self.due.model_error_at {
            if t + 1e-9 >= at {
                self.due.model_error_at = None;
                if self.st.port().status_ref().skill.is_none() {
                    let model_errors = self.st.counters.model_errors;
                    self.due
                        .wakes
                        .push_back(Wake::new(WakeDetail::ModelError(ModelErrorWake { model_errors })));
                }
            }
        }
        self.check_stuck(t);
        self.check_limits(t, v.odom_m);
        if self.opts.pace > 0.0 && self.st.port().dt_s() > 0.0 {
            let want = t / self.opts.pace;
            let have = self.progress.wall0.elapsed().as_secs_f64();
            if want > have {
                std::thread::sleep(std::time::Duration::from_secs_f64(want - have));
            }
        }
    }

    /// Writes a `link_stats` row.
    pub(crate) fn log_link_stats(&mut self, s: crate::world::LinkStats) {
        let t = self.st.t();
        self.st.log(Row::LinkStats(crate::runfolder::rows::LinkStatsRow {
            t,
            wall: wall_now(),
            sent: s.sent,
            received: s.received,
            bytes_sent: s.bytes_sent,
            bytes_received: s.bytes_received,
            dropped_sweeps: s.dropped_sweeps,
            ping_rtt_ms: s.ping_rtt_ms,
            observation_age_s: s.observation_age_s,
            lateness_s: s.lateness.newest_s,
            lateness_max_s: s.lateness.max_s,
        }));
    }

    /// The link is lost: a `link_lost` row, and the run ends `link_lost`.
    pub(crate) fn on_link_lost(&mut self, cause: crate::world::LossCause) {
        if self.end.is_some() {
            return;
        }
        let t = self.st.t();
        self.st.log(Row::LinkLost(crate::runfolder::rows::LinkLostRow {
            t,
            wall: wall_now(),
            kind: Some(cause.kind()),
            cause: cause.to_string(),
        }));
        self.end = Some(EndCode::LinkLost);
    }

    /// Writes the pose row due now.
    pub(crate) fn log_pose(&mut self) {
        let v = self.st.port().vehicle();
        let truth = self.st.port().truth();
        let t = self.seen.next_pose_n as f64 * POSE_PERIOD_S;
        self.seen.next_pose_n += 1;
        if self.seen.next_pose_n > 1 {
            self.st.memory.driven.push(v.pose.pos());
        }
        let status = self.st.port().status_ref();
        let skill = status.skill.map(|s| s.as_str().to_string());
        let progress = status.progress;
        if let Some(s) = self.session.as_mut() {
            s.observe(t, skill.as_deref(), progress);
        }
        let row = PoseRow {
            t,
            wall: wall_now(),
            x: v.pose.x,
            y: v.pose.y,
            yaw: v.pose.yaw,
            speed_mps: v.speed_mps,
            skill,
            contact: truth.as_ref().is_some_and(|t| t.contact),
            contact_steps: truth.as_ref().map_or(0, |t| t.contact_steps),
            contact_object: truth.as_ref().and_then(|t| t.contact_object),
        };
        self.st.log(Row::Pose(row));
    }

    fn on_event(&mut self, e: acres_vehicle::SkillEvent) {
        self.st.record_event(&e);
        self.safety.skill_event(&e);
        if let EventDetail::Hold { x, y, .. } = &e.detail {
            let objects = self.st.port().truth_footprints();
            self.safety.hold(acres_farm::geom::Vec2::new(*x, *y), &objects);
        }
        let t = self.st.t();
        let detail = match serde_json::to_value(&e.detail) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        self.st.log(Row::Event(EventRow {
            t,
            wall: wall_now(),
            name: e.name.as_str().to_string(),
            skill: e.skill.map(|s| s.as_str().to_string()),
            code: e.code.map(|c| c.as_str().to_string()),
            cause: e.cause.clone(),
            detail: detail.clone(),
        }));
        let view = EventView {
            t_s: (e.t_s * 10.0).round() / 10.0,
            name: e.name,
            id: e.id,
            skill: e.skill.map(|s| s.as_str()),
            code: e.code.map(|c| c.as_str()),
            cause: e.cause.clone(),
            detail,
        };
        self.st.remember_event(serde_json::to_value(&view).expect("an event view is plain data"));
        match (e.name, &e.detail) {
            (EventName::SkillEnded, _) => {
                let code = e.code.unwrap_or(ResultCode::Failed);
                if code == ResultCode::Blocked {
                    self.progress.blocked_count += 1;
                }
                if let Some(c) = self.classical.as_mut() {
                    c.on_skill_ended(&e);
                } else {
                    self.due.wakes.push_back(Wake::new(WakeDetail::SkillEnded(view)));
                }
            }
            (EventName::FieldScouted, EventDetail::Scouted { field: f }) => {
                self.progress.scouted_at.push((f.clone(), t));
                self.st.mission.removed.insert(f.clone());
                if let Some(p) = self.st.mission.plan.as_mut() {
                    if p.next_visit() == Some(f.as_str()) {
                        p.next += 1;
                    }
                }
            }
            (EventName::ShieldHold, EventDetail::Hold { x, y, .. }) => {
                self.st.mission.site = Some(acres_farm::geom::Vec2::new(*x, *y));
            }
            (EventName::ShieldRelease | EventName::SkillStarted, _) => self.due.stuck_sent = false,
            _ => {}
        }
    }

    fn on_scan(&mut self) {
        let Some(scan) = self.st.port().scan().copied() else { return };
        let sensor = self.st.port().sensor_pose();
        self.st.memory.knowledge.update(&scan, sensor, 40.0);
        // A place that went out may come back (a new object): report it again then.
        let present: std::collections::BTreeSet<_> = self.st.memory.knowledge.objects().into_iter().collect();
        self.seen.reported_cells.retain(|c| present.contains(c));
        if self.classical.is_some() {
            self.classical_scan();
            return;
        }
        self.planner_scan();
    }

    /// The classical rules hear of places on the route ahead not reported before.
    fn classical_scan(&mut self) {
        let Some(c) = self.classical.as_mut() else { return };
        let route = self.st.port().route_ahead();
        let fresh: Vec<_> = self
            .st
            .memory
            .knowledge
            .on_route(&route)
            .into_iter()
            .filter(|c| !self.seen.reported_cells.contains(c))
            .collect();
        if !fresh.is_empty() {
            self.seen.reported_cells.extend(fresh);
            c.on_returns_on_route();
        }
    }

    /// A planner hears of new places with objects on the route ahead (or the interrupted one)
    /// or on the plan's legs: a `returns_on_route` row and wake-up (profile vehicle), or of
    /// objects in the sensors' reach (profile simulator, truth through the guard).
    fn planner_scan(&mut self) {
        let route = self.st.port().route_ahead();
        let mut on_route: Vec<[f64; 2]> = Vec::new();
        let mut new_cells = Vec::new();
        for c in self.st.memory.knowledge.on_route(&route) {
            if !self.seen.reported_cells.contains(&c) {
                new_cells.push(c);
            }
            let p = cell_center(c);
            on_route.push([p.x, p.y]);
        }
        let mut on_plan: Vec<PlanCell> = Vec::new();
        let mut plan_leg = None;
        if let Some(p) = &self.st.mission.plan {
            for (key, l) in p.legs.iter().skip(crate::tools::exec::plan_leg_index(p)) {
                for c in self.st.memory.knowledge.on_route(l) {
                    if !self.seen.reported_cells.contains(&c) && !new_cells.contains(&c) {
                        new_cells.push(c);
                        plan_leg.get_or_insert_with(|| key.key());
                    }
                    let pc = cell_center(c);
                    on_plan.push(PlanCell { leg: key.key(), x: pc.x, y: pc.y });
                }
            }
        }
        if self.opts.profile == Profile::Simulator {
            self.objects_in_reach(&route);
            for c in new_cells {
                self.seen.reported_cells.insert(c);
            }
            return;
        }
        if new_cells.is_empty() {
            return;
        }
        let cells: Vec<[f64; 2]> = new_cells
            .iter()
            .map(|c| {
                let p = cell_center(*c);
                [p.x, p.y]
            })
            .collect();
        for c in &new_cells {
            self.seen.reported_cells.insert(*c);
        }
        let on_current = !on_route.is_empty();
        let status = self.st.port().status();
        let target = status.target.or_else(|| status.interrupted.map(|i| i.2));
        let leg = if on_current { target.map(|t| format!("route to {t}")) } else { plan_leg };
        self.st.log(Row::ReturnsOnRoute(ReturnsOnRouteRow {
            t: self.st.t(),
            wall: wall_now(),
            cells: cells.clone(),
            leg: leg.clone(),
        }));
        // One wake-up for a burst of cells: skip when one is already waiting.
        if self.due.wakes.iter().any(|w| w.reason() == WakeReason::ReturnsOnRoute) {
            return;
        }
        self.due.wakes.push_back(Wake::new(WakeDetail::ReturnsOnRoute(ReturnsWake {
            on_route_cells: on_route,
            on_plan,
            leg,
            new_cells: cells,
        })));
    }

    /// Profile simulator: a wake-up for each object that comes into the sensors' reach (truth,
    /// through the guard).
    fn objects_in_reach(&mut self, route: &[acres_farm::geom::Vec2]) {
        if let Ok(truth) = self.st.guarded_truth("the objects in the sensors' reach") {
            let pos = self.st.pose().pos();
            for (id, kind, pose) in &truth.objects {
                let d = pose.pos().dist(pos);
                if d <= SENSOR_REACH_M && self.seen.seen_objects.insert(*id) {
                    let on = crate::world::knowledge::near_polyline(pose.pos(), route, 3.0);
                    self.due.wakes.push_back(Wake::new(WakeDetail::ObjectSeen(ObjectWake {
                        id: *id,
                        kind: kind.as_str(),
                        x: pose.x,
                        y: pose.y,
                        distance_m: (d * 10.0).round() / 10.0,
                        near_route: on,
                    })));
                }
            }
        }
    }

    fn due_requests(&mut self, t: f64) {
        let seen = self.st.port().truth().map(|tr| tr.first_seen).unwrap_or_default();
        let mut due = Vec::new();
        for (when, text, fired) in self.due.requests.iter_mut() {
            if *fired {
                continue;
            }
            let at = match when {
                When::At { t_s } => Some(*t_s),
                When::AfterSeen { id, delay_s } => seen.get(id).map(|s| *s + *delay_s),
            };
            if at.is_some_and(|a| t + 1e-9 >= a) {
                *fired = true;
                due.push(text.clone());
            }
        }
        for text in due {
            self.st.mission.requests.push((t, text.clone()));
            self.st.log(Row::Request(RequestRow { t, wall: wall_now(), text: text.clone() }));
            self.st
                .remember_event(json!({"t_s": (t * 10.0).round() / 10.0, "name": "request", "text": text}));
            if let Some(c) = self.classical.as_mut() {
                c.on_request(&text);
            } else {
                self.due.wakes.push_back(Wake::new(WakeDetail::Request(RequestWake { text })));
            }
        }
    }

    fn check_stuck(&mut self, t: f64) {
        if self.recovery.mode != RecoveryMode::Menu || self.due.stuck_sent || self.classical.is_some() {
            return;
        }
        let Some(since) = self.st.port().status_ref().hold_since_s else { return };
        if t - since + 1e-9 < self.recovery.hold_s {
            return;
        }
        self.due.stuck_sent = true;
        if self.st.counters.stuck_wake_ups >= u64::from(self.limits.stuck_wake_ups) {
            // The planner used its stuck wake-ups: the classical rules decide.
            self.classical_recovery();
            return;
        }
        self.st.counters.stuck_wake_ups += 1;
        let st = self.st.port().status();
        let ahead_m = self.st.port().ahead_m();
        self.due.wakes.push_back(Wake::new(WakeDetail::Stuck(StuckWake {
            held_s: (t - since).round(),
            skill: st.skill.map(|s| s.as_str()),
            target: st.target,
            ahead_m: ahead_m.is_finite().then(|| (ahead_m * 10.0).round() / 10.0),
            options: crate::run::classical::RECOVERY_OPTIONS,
            stuck_wake_ups_left: u64::from(self.limits.stuck_wake_ups) - self.st.counters.stuck_wake_ups,
        })));
    }

    fn check_limits(&mut self, t: f64, odom_m: f64) {
        if t >= self.limits.sim_s {
            self.end = Some(EndCode::LimitSimTime);
        } else if self.progress.wall0.elapsed().as_secs_f64() >= self.limits.wall_s {
            self.end = Some(EndCode::LimitWallTime);
        }
        if let Some(stall_s) = self.limits.stall_s {
            self.progress.stall.push_back((t, odom_m));
            while self.progress.stall.len() > 2 && self.progress.stall[1].0 <= t - stall_s {
                self.progress.stall.pop_front();
            }
            if let Some(&(t0, o0)) = self.progress.stall.front() {
                if t - t0 >= stall_s - 1e-9 && odom_m - o0 < STALL_MIN_M {
                    self.end = Some(EndCode::LimitStalled);
                }
            }
        }
    }
}
