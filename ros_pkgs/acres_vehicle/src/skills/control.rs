//! The control step: the running skill advanced under the shield, its ends and its events.

use acres_farm::geom::{Pose, Vec2};

use crate::follower::{Follower, Twist};
use crate::local_planner::{FaultKind, PlanStep, PlannerFault};
use crate::shield::Verdict;

use super::*;

impl SkillServer {
    /// One control step: advances the running skill and returns the drive command (after the
    /// shield).
    pub fn control(&mut self, obs: &Observation) -> Twist {
        self.t_s = obs.t_s;
        if self.link_hold_since.is_some() {
            // Held for the link (link.rs): a standstill, the skill paused.
            return Twist::default();
        }
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
                    let e = match self.coverage.entry(field.clone()) {
                        std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                        std::collections::btree_map::Entry::Vacant(e) => {
                            self.revision += 1;
                            e.insert(0.0)
                        }
                    };
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
                if m.learned.is_some() {
                    match self.learned_command(m, obs) {
                        Err(end) => ended = Some(end),
                        Ok(cmd) => (out, ended, shield_event) = self.shielded(m, cmd, obs),
                    }
                } else if m.follower.arrived() {
                    if obs.speed_mps < 0.05 {
                        ended = Some((ResultCode::Succeeded, format!("arrived at {}", m.target)));
                    }
                } else if off > self.opts.max_track_error_m && m.tracking && aligned(&m.follower, &obs.pose) {
                    ended = Some((ResultCode::Failed, format!("left the route: {off:.1} m off")));
                } else {
                    match self.plan(r.id, m, obs) {
                        Ok(cmd) => (out, ended, shield_event) = self.shielded(m, cmd, obs),
                        // A faulted planner's step is neither passed nor held: the motion ends.
                        Err(fault) => {
                            ended = Some((ResultCode::ReactiveFault, format!("local planner {fault}")))
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

impl SkillServer {
    /// The local planner's command for motion `id` at this step (the planner is made first
    /// when there is none); a non-finite command is a fault too.
    fn plan(&mut self, id: u64, m: &Motion, obs: &Observation) -> Result<Twist, PlannerFault> {
        let planner = match &mut self.planner {
            Some(p) => p,
            None => self.planner.insert(self.planners.make(&self.map, &self.opts.follower)),
        };
        let step = PlanStep {
            id,
            t_s: obs.t_s,
            pose: obs.pose,
            speed_mps: obs.speed_mps,
            track: &m.follower,
            map: &self.map,
            limits: self.opts.limits,
            cap_mps: m.cap_mps,
            ahead_m: finite(self.ahead_m),
        };
        let cmd = planner.command(&step)?;
        if !(cmd.speed_mps.is_finite() && cmd.yaw_rate_rps.is_finite()) {
            return Err(PlannerFault {
                kind: FaultKind::Malformed,
                planner: self.planners.name().to_string(),
                message: format!("a command that is not finite: {cmd:?}"),
            });
        }
        Ok(cmd)
    }

    /// The shield's verdict on a motion's command: the command (or a stop while held), an end
    /// (`blocked` after `blocked_s` held, `failed` after `stall_s` without progress), and the
    /// hold or release event.
    fn shielded(&mut self, m: &mut Motion, cmd: Twist, obs: &Observation) -> Shielded {
        let mut out = Twist::default();
        let mut ended = None;
        let mut shield_event = None;
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
                    ended = Some((ResultCode::Failed, format!("no progress for {:.0} s", self.opts.stall_s)));
                }
            }
            Verdict::Hold { ahead_m, stopping_m } => {
                m.best_t = obs.t_s;
                match m.hold_since {
                    None => {
                        m.hold_since = Some(obs.t_s);
                        let at = obs.pose.to_map(Vec2::new(ahead_m + self.opts.sensor_forward_m, 0.0));
                        shield_event = Some((
                            EventName::ShieldHold,
                            EventDetail::Hold { ahead_m, stopping_m, x: at.x, y: at.y },
                        ));
                    }
                    Some(since) if obs.t_s - since >= self.opts.blocked_s => {
                        ended = Some((
                            ResultCode::Blocked,
                            format!(
                                "the shield held the vehicle for {:.0} s: obstacle {ahead_m:.1} m ahead",
                                self.opts.blocked_s
                            ),
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
        (out, ended, shield_event)
    }
}

/// What [`SkillServer::shielded`] gives: the command, an end, an event.
type Shielded = (Twist, Option<(ResultCode, String)>, Option<(EventName, EventDetail)>);

/// A motion is on its route once the vehicle is this near it, heading along it, m.
const TRACKING_M: f64 = 2.0;

/// True when the vehicle heads along the path (within 45°): a large cross-track error then means
/// it drifted off, not that it is still turning onto the route.
fn aligned(f: &Follower, pose: &Pose) -> bool {
    let d = acres_farm::geom::wrap_angle(pose.yaw - f.path.yaw_at(f.s_m));
    d.abs() < std::f64::consts::FRAC_PI_4
}
