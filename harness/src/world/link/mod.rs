//! The link world (`--world link`): [`WorldPort`] over the bridge's TCP socket
//! (`acres_link_protocol`). The harness knows no ROS transport: the bridge node does.
//!
//! - The mission clock is the vehicle's, counted from the first step: each `step` carries the
//!   observation's stamp, and
//!   [`WorldPort::step`] waits for the next `step` (a scripted planner's think time is waited
//!   out on the vehicle's clock; a model call's latency passes in real time while steps queue).
//! - The scan comes from each sweep through `acres_vehicle::scan` (the one scan function), made
//!   on the session's reader thread.
//! - Sweeps come in lines of their own, stamped; each is paired with the step of the nearest
//!   stamp within one control step ([`pairing`], as `message_filters`' approximate-time policy
//!   does), whichever of the two came first, and its scan is placed from that step's pose.
//! - Beats and pings go from their own thread ([`session`]), whatever the planner does.
//! - The world can be lost ([`WorldPort::lost`]): socket closed, no pong in 2 s, or no step for
//!   `--link-silent-s`.
//! - Without a simulator's truth (a real vehicle) [`WorldPort::truth`] is `None`.
//! - The route ahead is the observation's (`route_ahead`, the vehicle node's skill server's), so
//!   `returns_on_route` works as on the core world.
//! - A skill ends on its `skill_ended` event, or on its goal's `result` when the event does not
//!   come ([`ends`]): a lost event never freezes the status.
//! - The vehicle's word is checked ([`check`]): a step with non-finite or absurd numbers, or
//!   whose time goes back or jumps ahead, loses the link with
//!   [`LossCause::VehicleFault`] (nothing of it is applied).
//! - What the link does not carry: the scenario's pending object events (the core node has
//!   them). The digest is an FNV-1a hash of the steps' times and poses: it identifies what came
//!   over the link, it does not replay.

pub mod check;
pub mod convert;
pub mod ends;
pub mod lateness;
pub mod pairing;
#[cfg(test)]
mod quantized_tests;
pub mod session;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acres_core::lidar::Sweep;
use acres_farm::geom::{Pose, Vec2};
use acres_link_protocol as link;
use acres_vehicle::scan::{Scan, ScanConfig};
use acres_vehicle::shield::ShieldRule;
use acres_vehicle::{EventName, Reply, ResultCode, SkillEvent, SkillKind, SkillRequest, Status, StatusRef};
use link::{FromBridge, FromHarness};

use crate::scenario::Scenario;
use crate::world::{LinkStats, LossCause, Truth, VehicleView, WorldPort};

use pairing::{Pairing, SweepIn};

pub use session::{AttachError, Received, Session};

/// How long a skill request waits for its reply, s.
const REPLY_TIMEOUT_S: f64 = 5.0;
/// How often link counts are reported, s of wall time.
const STATS_PERIOD_S: f64 = 5.0;

/// Where and how to reach the bridge.
#[derive(Clone)]
pub struct LinkOptions {
    /// The bridge's host.
    pub host: String,
    /// The bridge's port.
    pub port: u16,
    /// No step for this long loses the link, s.
    pub silent_s: f64,
    /// The shared token (never logged).
    pub token: Option<String>,
    /// The bridge certificates' SHA-256 fingerprints pinned (64 hex characters each); empty:
    /// a plaintext link.
    pub pins: Vec<String>,
    /// The encoding the harness asks for its sweeps (`--link-sweeps`).
    pub sweep_encoding: link::SweepEncoding,
}

impl std::fmt::Debug for LinkOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkOptions")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("silent_s", &self.silent_s)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("pins", &self.pins)
            .field("sweep_encoding", &self.sweep_encoding)
            .finish()
    }
}

/// The fingerprints to pin: each of `given` and each line of `trust_file` (`#` comments);
/// none means a plaintext link, which only a loopback `host` or `insecure` allows. The error
/// names the bad fingerprint (and the file and line).
pub fn pins(
    given: &[String],
    trust_file: Option<&std::path::Path>,
    host: &str,
    insecure: bool,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for g in given {
        out.push(link::tls::parse_fingerprint(g).map_err(|e| format!("--link-fingerprint: {e}"))?);
    }
    if let Some(f) = trust_file {
        let text = std::fs::read_to_string(f).map_err(|e| format!("--link-trust {}: {e}", f.display()))?;
        for (i, l) in text.lines().enumerate() {
            let l = l.split('#').next().unwrap_or("").trim();
            if !l.is_empty() {
                out.push(
                    link::tls::parse_fingerprint(l).map_err(|e| format!("{}:{}: {e}", f.display(), i + 1))?,
                );
            }
        }
        if out.is_empty() {
            return Err(format!("--link-trust {}: no fingerprint in it", f.display()));
        }
    }
    let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|a| a.is_loopback());
    if out.is_empty() && !loopback && !insecure {
        return Err(format!(
            "--link-host {host} is not loopback: pin the bridge's certificate (--link-fingerprint or --link-trust) or allow a plaintext link with --link-insecure"
        ));
    }
    Ok(out)
}

/// What the scenario fixes for the link world.
struct Fixed {
    dt_s: f64,
    shield: Vec<ShieldRule>,
    /// The LiDAR's geometry (the scenario's): the sensor's mount, and the recording's.
    lidar: Option<acres_core::lidar::LidarConfig>,
}

/// The vehicle as the applied steps show it.
struct Observed {
    vehicle: VehicleView,
    status: Status,
    ahead_m: f64,
    route_ahead: Vec<Vec2>,
    scan: Option<Scan>,
    /// The vehicle's pose at the step the scan's sweep was paired with.
    scan_pose: Option<Pose>,
    /// The last sweep (its points), for the recording.
    sweep: Option<Arc<Sweep>>,
    truth: Option<Truth>,
    events: Vec<SkillEvent>,
}

/// What came over the link and waits to be taken.
struct Inbox {
    /// Steps received and not applied yet, each with the sweep paired with it.
    queued: VecDeque<(link::Step, Option<SweepIn>)>,
    /// Sweeps waiting for their step, and the applied steps a late sweep pairs with.
    pairing: Pairing,
    /// The last step received (applied or queued).
    last_seq: u64,
    replies: Vec<link::SkillReply>,
    /// Skill ends from results when their events do not come.
    ends: ends::Ends,
}

/// The world over the link.
pub struct LinkWorld {
    session: Session,
    fixed: Fixed,
    now: Observed,
    inbox: Inbox,
    next_id: u64,
    digest: u64,
    dropped_sweeps: u64,
    /// The vehicle's clock at the first step: mission time counts from it, s.
    t0_s: Option<f64>,
    /// The vehicle's clock at the last step applied, s.
    last_raw_t_s: Option<f64>,
    last_stats: Instant,
}

impl LinkWorld {
    /// Attaches to the bridge and waits for the first step.
    pub fn connect(sc: &Scenario, o: &LinkOptions) -> Result<LinkWorld, AttachError> {
        let (wc, _) = acres_core::world_of(sc, 0);
        let scan_cfg =
            wc.lidar.as_ref().map_or_else(ScanConfig::default, |l| ScanConfig::for_mount(l.mount_height_m));
        let session = Session::attach(o, Duration::from_secs(20), scan_cfg)?;
        let opts = acres_vehicle::server_options(sc);
        let mut w = LinkWorld {
            session,
            fixed: Fixed {
                dt_s: wc.dt_s,
                shield: acres_vehicle::shield::Shield::new(opts.shield).rules(),
                lidar: wc.lidar.clone(),
            },
            now: Observed {
                vehicle: VehicleView { t_s: 0.0, pose: sc.start_pose(), speed_mps: 0.0, odom_m: 0.0 },
                status: Status {
                    skill: None,
                    id: None,
                    state: acres_vehicle::SkillState::Idle,
                    progress: 0.0,
                    target: None,
                    remaining_m: None,
                    hold_since_s: None,
                    interrupted: None,
                    coverage: Default::default(),
                    scouted: Vec::new(),
                },
                ahead_m: f64::INFINITY,
                route_ahead: Vec::new(),
                scan: None,
                scan_pose: None,
                sweep: None,
                truth: None,
                events: Vec::new(),
            },
            inbox: Inbox {
                queued: VecDeque::new(),
                pairing: Pairing::new(wc.dt_s),
                last_seq: 0,
                replies: Vec::new(),
                ends: ends::Ends::default(),
            },
            next_id: 0,
            digest: 0xcbf2_9ce4_8422_2325,
            dropped_sweeps: 0,
            t0_s: None,
            last_raw_t_s: None,
            last_stats: Instant::now(),
        };
        if !w.step() && w.lost().is_some() {
            return Err(AttachError::Handshake(format!(
                "no first step: {}",
                w.lost().map(|c| c.to_string()).unwrap_or_default()
            )));
        }
        Ok(w)
    }

    /// The bridge's hello.
    pub fn hello(&self) -> &link::Hello {
        &self.session.shared.hello
    }

    /// Takes one message from the bridge, waiting up to `timeout`; false when none came.
    fn pump(&mut self, timeout: Duration) -> bool {
        match self.session.rx.recv_timeout(timeout).map(|r| (r.msg, r.scan.zip(r.points))) {
            Ok((FromBridge::Step(s), _)) => {
                self.inbox.last_seq = s.seq;
                self.inbox.queued.push_back((s, None));
                self.inbox.pairing.pair(&mut self.inbox.queued);
            }
            Ok((FromBridge::Sweep(sw), Some((scan, points)))) => {
                self.inbox.pairing.arrived(SweepIn { t_s: sw.t_s, scan, points });
                self.inbox.pairing.pair(&mut self.inbox.queued);
            }
            Ok((FromBridge::Reply(r), _)) => self.inbox.replies.push(r),
            Ok((FromBridge::Result(r), _)) => self.inbox.ends.on_result(r, self.inbox.last_seq),
            Ok((FromBridge::Error(e), _)) => eprintln!(
                "acres-harness: link: the bridge could not read a line ({:?}): {}",
                e.code, e.message
            ),
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => return false,
            Err(RecvTimeoutError::Disconnected) => {
                self.session.shared.lose(LossCause::SocketClosed);
                return false;
            }
        }
        true
    }

    fn apply(&mut self, s: link::Step, sweep: Option<SweepIn>) {
        let mut v = convert::vehicle_of(&s.observation);
        let raw_t_s = v.t_s;
        let t0 = *self.t0_s.get_or_insert(v.t_s);
        v.t_s = ((v.t_s - t0) * 1e6).round() / 1e6;
        self.now.vehicle = v;
        let mut events: Vec<SkillEvent> = s.events.iter().filter_map(convert::event_of).collect();
        for e in &mut events {
            e.t_s = ((e.t_s - t0) * 1e6).round() / 1e6;
        }
        self.inbox.ends.filter_events(&mut events);
        // Observations and events travel on two topics: an observation that shows no skill
        // before the skill's `skill_ended` came keeps the last status, so the loop never sees
        // a skill gone without its end.
        let status = convert::status_of(&s.observation);
        self.inbox.ends.on_status(&status);
        // A skill whose `skill_ended` did not come ends on its goal's result.
        for e in self.inbox.ends.after_step(s.seq, self.now.vehicle.t_s) {
            eprintln!(
                "acres-harness: link: skill #{} ended by its goal's result ({}): its skill_ended event did not come",
                e.id.unwrap_or(0),
                e.code.map_or("?", |c| c.as_str())
            );
            events.push(e);
        }
        if status.skill.is_some() || self.inbox.ends.open().is_none() {
            self.now.status = status;
        }
        self.now.ahead_m = s.observation.ahead_m;
        self.now.route_ahead = convert::route_of(&s.observation);
        self.dropped_sweeps = s.dropped_sweeps;
        self.inbox.pairing.applied(raw_t_s, self.now.vehicle.t_s, self.now.vehicle.pose);
        for b in self.now.vehicle.t_s.to_le_bytes().iter().chain(self.now.vehicle.pose.x.to_le_bytes().iter())
        {
            self.digest = (self.digest ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.now.events.extend(events);
        if let Some(sw) = sweep {
            let (t, pose) = (self.now.vehicle.t_s, self.now.vehicle.pose);
            self.take_scan(sw, t, pose);
        }
        if let Some(t) = &s.truth {
            self.now.truth = Some(convert::truth_of(t));
        }
    }

    fn goal_of(req: &SkillRequest) -> acres_msgs::acres_interfaces::SkillGoal {
        acres_msgs::acres_interfaces::SkillGoal {
            // A learned skill travels by its name (the vehicle node knows it from the scenario).
            skill: match (req.skill, &req.name) {
                (Some(SkillKind::Learned), Some(name)) => name.clone(),
                (k, _) => k.map_or(String::new(), |k| k.as_str().into()),
            },
            place: req.place.clone().unwrap_or_default(),
            field: req.field.clone().unwrap_or_default(),
            seconds: req.seconds.unwrap_or(f64::NAN),
            speed_cap_mps: req.speed_cap_mps.unwrap_or(f64::NAN),
        }
    }

    /// The `skill_started` event of an accepted request: waits for it among the steps that come
    /// (up to `timeout`); the steps stay queued for the loop (rows never go back in time). A
    /// `resume` starts the kind it resumes (its event says `resumed`), as in the core world.
    fn started_event(&mut self, kind: SkillKind, timeout: Duration) -> Option<SkillEvent> {
        let deadline = Instant::now() + timeout;
        let mut seen = 0;
        loop {
            let hit = self.inbox.queued.iter().enumerate().skip(seen).find_map(|(i, (s, _))| {
                s.events
                    .iter()
                    .filter_map(convert::event_of)
                    .find(|e| {
                        e.name == EventName::SkillStarted
                            && (e.skill == Some(kind)
                                || (kind == SkillKind::Resume
                                    && matches!(e.detail, acres_vehicle::EventDetail::Resumed { .. })))
                    })
                    .map(|e| (i, e))
            });
            if let Some((_, e)) = hit {
                return Some(e);
            }
            seen = self.inbox.queued.len();
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.lost().is_some() {
                return None;
            }
            self.pump(left.min(Duration::from_millis(50)));
        }
    }
}

impl WorldPort for LinkWorld {
    fn dt_s(&self) -> f64 {
        self.fixed.dt_s
    }
    fn t_s(&self) -> f64 {
        self.now.vehicle.t_s
    }
    fn step(&mut self) -> bool {
        loop {
            if let Some((s, scan)) = self.inbox.queued.pop_front() {
                if let Err(why) = check::step(&s, self.last_raw_t_s) {
                    eprintln!("acres-harness: link: {why}");
                    self.inbox.queued.clear();
                    self.session.shared.lose(LossCause::VehicleFault { why });
                    return false;
                }
                self.last_raw_t_s = Some(convert::secs(&s.observation.header.stamp));
                let mut swept = scan.is_some();
                self.apply(s, scan);
                // A sweep that came after its step was applied: its scan now, placed from the
                // pose of its step.
                if let Some((sw, t, pose)) = self.inbox.pairing.take_late() {
                    if swept {
                        self.inbox.pairing.superseded();
                    } else {
                        self.take_scan(sw, t, pose);
                        swept = true;
                    }
                }
                return swept;
            }
            if self.lost().is_some() {
                return false;
            }
            self.pump(Duration::from_millis(50));
        }
    }
    fn request(&mut self, req: &SkillRequest) -> Reply {
        self.next_id += 1;
        let id = self.next_id;
        self.session.shared.send(&FromHarness::Skill(link::SkillRequest { id, goal: Self::goal_of(req) }));
        let deadline = Instant::now() + Duration::from_secs_f64(REPLY_TIMEOUT_S);
        let reply = loop {
            if let Some(i) = self.inbox.replies.iter().position(|r| r.id == id) {
                break Some(self.inbox.replies.remove(i));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.lost().is_some() {
                break None;
            }
            self.pump(left.min(Duration::from_millis(50)));
        };
        let refused = |cause: String| Reply {
            accepted: false,
            skill: req.skill,
            id: None,
            code: Some(ResultCode::Rejected),
            cause: Some(cause),
            route_m: None,
        };
        let Some(r) = reply else {
            if self.lost().is_none() {
                self.session.shared.lose(LossCause::NoReply { timeout_s: REPLY_TIMEOUT_S });
            }
            return refused("the link was lost before the skill server answered".into());
        };
        if !r.accepted {
            return refused(r.cause);
        }
        let kind = req.skill.unwrap_or(SkillKind::Stop);
        if kind == SkillKind::Stop {
            return Reply {
                accepted: true,
                skill: Some(kind),
                id: None,
                code: None,
                cause: None,
                route_m: None,
            };
        }
        match self.started_event(kind, Duration::from_secs(2)) {
            Some(e) => {
                let kind = e.skill.unwrap_or(kind);
                self.accepted(kind, &e);
                let route_m = match e.detail {
                    acres_vehicle::EventDetail::Route { route_m, .. } => Some(route_m),
                    acres_vehicle::EventDetail::Resumed { remaining_m, .. } => Some(remaining_m),
                    _ => None,
                };
                Reply::started(kind, e.id.unwrap_or(0), route_m, None)
            }
            None => {
                Reply { accepted: true, skill: Some(kind), id: None, code: None, cause: None, route_m: None }
            }
        }
    }
    fn vehicle(&self) -> VehicleView {
        self.now.vehicle
    }
    fn status_ref(&self) -> StatusRef<'_> {
        self.now.status.view()
    }
    fn route_ahead(&self) -> Vec<Vec2> {
        self.now.route_ahead.clone()
    }
    fn scan(&self) -> Option<&Scan> {
        self.now.scan.as_ref()
    }
    fn sweep(&self) -> Option<&Arc<Sweep>> {
        self.now.sweep.as_ref()
    }
    fn lidar(&self) -> Option<acres_core::lidar::LidarConfig> {
        self.fixed.lidar.clone()
    }
    /// The LiDAR's pose at the scan's sweep: from the pose of the step it was paired with.
    fn sensor_pose(&self) -> Pose {
        let p = self.now.scan_pose.unwrap_or(self.now.vehicle.pose);
        let s = p.to_map(Vec2::new(self.fixed.lidar.as_ref().map_or(0.0, |l| l.mount_forward_m), 0.0));
        Pose { x: s.x, y: s.y, yaw: p.yaw }
    }
    fn ahead_m(&self) -> f64 {
        self.now.ahead_m
    }
    fn shield_rules(&self) -> Vec<ShieldRule> {
        self.fixed.shield.clone()
    }
    fn drain_events(&mut self) -> Vec<SkillEvent> {
        std::mem::take(&mut self.now.events)
    }
    fn pending_object_events(&self) -> usize {
        0
    }
    fn truth(&self) -> Option<Truth> {
        self.now.truth.clone()
    }
    fn digest(&self) -> String {
        format!("{:016x}", self.digest)
    }
    fn lost(&self) -> Option<LossCause> {
        self.session.shared.lost()
    }
    fn link_stats(&mut self) -> Option<LinkStats> {
        if self.last_stats.elapsed().as_secs_f64() < STATS_PERIOD_S {
            return None;
        }
        self.last_stats = Instant::now();
        Some(self.stats_now())
    }
    fn end(&mut self, cause: &str) {
        self.session.end(cause);
    }
}

impl LinkWorld {
    /// Makes a paired sweep the world's scan: `t_s` and `pose`, the mission time and the
    /// vehicle's pose of its step.
    fn take_scan(&mut self, sw: SweepIn, t_s: f64, pose: Pose) {
        self.now.scan = Some(sw.scan);
        self.now.scan_pose = Some(pose);
        self.now.sweep = Some(Arc::new(Sweep { stamp_s: t_s, points: sw.points, seen: Vec::new() }));
    }

    /// A skill was accepted: until the vehicle's observations show it, the status shows it
    /// starting (its steps are still queued), so the loop never takes the vehicle for idle.
    fn accepted(&mut self, kind: SkillKind, e: &SkillEvent) {
        self.inbox.ends.accepted(e.id);
        if self.now.status.skill.is_none() {
            self.now.status.skill = Some(kind);
            self.now.status.id = e.id;
            self.now.status.state = if kind == SkillKind::Wait {
                acres_vehicle::SkillState::Waiting
            } else {
                acres_vehicle::SkillState::Running
            };
            self.now.status.progress = 0.0;
            self.now.status.target = match &e.detail {
                acres_vehicle::EventDetail::Route { target, .. }
                | acres_vehicle::EventDetail::Resumed { target, .. } => Some(target.clone()),
                _ => None,
            };
        }
    }

    /// The counts now (the lateness's largest since the last counts).
    pub fn stats_now(&self) -> LinkStats {
        let c = &self.session.shared.counts;
        let rtt = c.rtt_us.load(Ordering::Relaxed);
        LinkStats {
            sent: c.sent.load(Ordering::Relaxed),
            received: c.received.load(Ordering::Relaxed),
            bytes_sent: c.bytes_sent.load(Ordering::Relaxed),
            bytes_received: c.bytes_received.load(Ordering::Relaxed),
            dropped_sweeps: self.dropped_sweeps + self.inbox.pairing.unpaired(),
            ping_rtt_ms: (rtt > 0).then(|| rtt as f64 / 1000.0),
            observation_age_s: self.session.shared.step_age_s(),
            lateness: self.session.shared.lateness.lock().expect("lateness lock").take(),
        }
    }
}
