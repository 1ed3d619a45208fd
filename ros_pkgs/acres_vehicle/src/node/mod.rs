//! The vehicle node: the skill server (`crate::skills`) over ROS 2.
//!
//! | endpoint | type | does |
//! | --- | --- | --- |
//! | `/acres/skill` (action server, `skills:=true`) | `acres_interfaces/action/Skill` | accepts a goal the skill server starts, or rejects it (the cause on `/acres/events` and in the result); feedback; result with code and cause; cancel does what `on_cancel` says |
//! | `/odom` (in) | `nav_msgs/Odometry` | the observation; each one runs one control step (the stamp is the skill server's time) |
//! | `/lidar/points` (in, sensor data) | `sensor_msgs/PointCloud2` | the scan (`crate::scan::scan`, the one scan function); the shield re-checks at once |
//! | `/acres/skill/heartbeat` (in) | `acres_interfaces/Heartbeat` | the planner's side is alive |
//! | `/cmd_vel` (out) | `geometry_msgs/Twist` | the only drive command (no gear command) |
//! | `/acres/observation` (out) | `acres_interfaces/Observation` | pose, speed, skill, shield, driven distance, every odometry |
//! | `/acres/events` (out) | `acres_interfaces/SkillEvent` | the skill server's events |
//!
//! Fail-safes (wall clock, so they hold whatever the simulation rate):
//! - **heartbeat (the deadman)**: every accepted goal arms it, whatever happened before: a skill
//!   runs only while beats come. No beat for `heartbeat_timeout_s` (1.0 s) since the goal's
//!   acceptance or the last beat, whichever is later, *holds* the skill (the `link_hold` event;
//!   zero `/cmd_vel`, the skill paused, not ended). A beat within `heartbeat_grace_s` (3.0 s)
//!   of silence releases it (`link_release` with the held seconds): the skill goes on by itself.
//!   Past the grace, `on_cancel` applies (cause "heartbeat lost for N s"); so does a cancelled
//!   goal. `on_cancel` is `stop` (default: the skill ends `stopped`, the vehicle brakes to a
//!   stop and stays) or `return_home` (the skill ends `stopped`, then `return_home` starts, as a
//!   lost-link fail-safe of a field robot; it runs unwatched until the next goal).
//!   `heartbeat_timeout_s: 0` turns the deadman off, for a bench only: the node warns at every
//!   goal.
//! - **odometry**: odometry that stops for `odom_timeout_s` ends the running skill `failed` with
//!   the cause "odometry stopped for N s" and commands a stop (zero `/cmd_vel`, repeated).
//!
//! With `skills:=false` the node only observes: it publishes `/acres/observation` from odometry
//! and scans, and serves and drives nothing.

mod convert;
mod goals;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::scan::{scan, ScanConfig};
use crate::{Observation, ResultCode, ServerOptions, SkillKind, SkillRequest, SkillServer};
use acres_farm::Map;
use acres_msgs::acres_interfaces::{Heartbeat, Observation as ObsMsg, SkillEvent as EventMsg};
use acres_msgs::geometry_msgs::{Twist, Vector3};
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::sensor_msgs::PointCloud2;
use acres_ros::args::ArgsError;
use acres_ros::run::Shutdown;
use acres_ros::{qos, NodeError, Pub, RosArgs, RosNode, Sub, Waiter, ACTION_POLL};
use tracing::{info, warn};

pub use convert::{event_msg, observation_msg, observation_of};

/// What a cancelled goal or lost heartbeats do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnCancel {
    /// End the skill (`stopped`); the vehicle brakes and stays.
    Stop,
    /// End the skill (`stopped`), then drive home.
    ReturnHome,
}

/// The node's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Serve skills (`skills`, default true); false only observes.
    pub skills: bool,
    /// Beats that stop this long hold the running skill (`heartbeat_timeout_s`, 1.0; 0 turns
    /// the deadman off: a bench only), s.
    pub heartbeat_timeout_s: f64,
    /// Beats that stop this long apply `on_cancel` (`heartbeat_grace_s`, 3.0; longer than
    /// `heartbeat_timeout_s`); a beat before lets the held skill go on, s.
    pub heartbeat_grace_s: f64,
    /// `on_cancel`: `stop` (default) or `return_home`.
    pub on_cancel: OnCancel,
    /// Odometry that stops this long ends the skill (`odom_timeout_s`, 1.0), s.
    pub odom_timeout_s: f64,
    /// The LiDAR's distance ahead of the pose (`lidar_forward_m`, 1.0), m.
    pub lidar_forward_m: f64,
    /// The LiDAR's height above ground (`lidar_height_m`, 2.2), m.
    pub lidar_height_m: f64,
}

impl Params {
    /// Reads the parameters.
    pub fn from_args(a: &RosArgs) -> Result<Params, ArgsError> {
        let on_cancel = match a.str_or("on_cancel", "stop")?.as_str() {
            "stop" => OnCancel::Stop,
            "return_home" => OnCancel::ReturnHome,
            other => {
                return Err(ArgsError::ParamType {
                    name: "on_cancel".into(),
                    expected: "stop or return_home",
                    got: acres_ros::ParamValue::String(other.into()),
                })
            }
        };
        let heartbeat_timeout_s = a.f64_or("heartbeat_timeout_s", 1.0)?;
        let heartbeat_grace_s = a.f64_or("heartbeat_grace_s", DEFAULT_GRACE_S)?;
        let bad = |name: &str, expected: &'static str, v: f64| ArgsError::ParamType {
            name: name.into(),
            expected,
            got: acres_ros::ParamValue::Double(v),
        };
        if !(heartbeat_timeout_s >= 0.0 && heartbeat_timeout_s.is_finite()) {
            return Err(bad(
                "heartbeat_timeout_s",
                "0 (off, a bench only) or a positive time, s",
                heartbeat_timeout_s,
            ));
        }
        if heartbeat_timeout_s > 0.0
            && !(heartbeat_grace_s > heartbeat_timeout_s && heartbeat_grace_s.is_finite())
        {
            return Err(bad(
                "heartbeat_grace_s",
                "a time longer than heartbeat_timeout_s, s",
                heartbeat_grace_s,
            ));
        }
        Ok(Params {
            skills: a.bool_or("skills", true)?,
            heartbeat_timeout_s,
            heartbeat_grace_s,
            on_cancel,
            odom_timeout_s: a.f64_or("odom_timeout_s", 1.0)?,
            lidar_forward_m: a.f64_or("lidar_forward_m", 1.0)?,
            lidar_height_m: a.f64_or("lidar_height_m", 2.2)?,
        })
    }
}

/// The default grace of the deadman, s: longer than the harness's 2 s link-loss deadline, so a
/// stall the harness rides through the vehicle rides through too (with a 0.2 s beat, a second
/// of margin for the bridge and DDS), and short enough that a vehicle whose planner is gone
/// stands held for at most 2 s more before `on_cancel`.
pub const DEFAULT_GRACE_S: f64 = 3.0;

/// The vehicle node.
pub struct VehicleNode {
    /// The ROS node.
    pub node: RosNode,
    params: Params,
    server: SkillServer,
    scan_cfg: ScanConfig,
    goals: Option<goals::Goals>,
    cmd_vel: Pub<Twist>,
    observation: Pub<ObsMsg>,
    events: Pub<EventMsg>,
    odom: Sub<Odometry>,
    points: Sub<PointCloud2>,
    heartbeat: Sub<Heartbeat>,
    /// Wakes the loop when odometry, a sweep or a beat comes.
    waiter: Waiter,
    obs: Option<Observation>,
    odom_m: f64,
    last_odom: Option<Instant>,
    odom_lost: bool,
    last_beat: Option<Instant>,
    /// When the watched goal was accepted (the deadman armed); `None`: nothing is watched (no
    /// goal yet, or `on_cancel` applied for lost beats).
    armed: Option<Instant>,
}

impl VehicleNode {
    /// Makes the endpoints; `map` and `opts` configure the skill server.
    pub fn new(
        mut node: RosNode,
        params: Params,
        map: Arc<Map>,
        mut opts: ServerOptions,
    ) -> Result<VehicleNode, NodeError> {
        opts.sensor_forward_m = params.lidar_forward_m;
        let scan_cfg = ScanConfig::for_mount(params.lidar_height_m);
        let goals = if params.skills { Some(goals::Goals::new(&mut node)?) } else { None };
        let mut odom = node.subscription("odom", qos::default_profile())?;
        let mut points = node.subscription("lidar/points", qos::sensor_data())?;
        let mut heartbeat = node.subscription("acres/skill/heartbeat", qos::default_profile())?;
        let mut waiter = Waiter::new()?;
        waiter.watch(&mut odom)?;
        waiter.watch(&mut points)?;
        waiter.watch(&mut heartbeat)?;
        Ok(VehicleNode {
            cmd_vel: node.publisher("cmd_vel", qos::default_profile())?,
            observation: node.publisher("acres/observation", qos::default_profile())?,
            events: node.publisher("acres/events", qos::default_profile())?,
            odom,
            points,
            heartbeat,
            waiter,
            server: SkillServer::new(map, opts),
            node,
            params,
            scan_cfg,
            goals,
            obs: None,
            odom_m: 0.0,
            last_odom: None,
            odom_lost: false,
            last_beat: None,
            armed: None,
        })
    }

    /// Drives motions with the local planners of `factory` (the scenario's `local_planner`).
    pub fn set_local_planner(&mut self, factory: Arc<dyn crate::local_planner::LocalPlannerFactory>) {
        self.server.set_local_planner(factory);
    }

    /// With the scenario's learned skills ([`crate::learned::scenario_skills`]).
    pub fn with_learned(mut self, skills: Vec<Arc<crate::learned::LearnedSkill>>) -> Self {
        self.server.add_learned(skills);
        self
    }

    /// Runs until a signal.
    pub fn run(mut self, shutdown: &Shutdown) {
        info!(
            skills = self.params.skills,
            on_cancel = ?self.params.on_cancel,
            local_planner = self.server.local_planner_name(),
            "vehicle node running"
        );
        let mut last_stop_cmd = Instant::now();
        while !shutdown.requested() {
            let mut busy = false;
            if let Some(cloud) = self.points.latest() {
                busy = true;
                self.on_cloud(&cloud);
            }
            while let Some(o) = self.odom.take() {
                busy = true;
                self.on_odom(&o);
            }
            let mut beat = false;
            while self.heartbeat.take().is_some() {
                beat = true;
                self.last_beat = Some(Instant::now());
            }
            if beat && self.server.link_held() {
                self.release_hold();
            }
            if self.params.skills {
                busy |= self.serve();
                self.watchdogs();
                // While odometry is lost, the stop is repeated (10 Hz) for any base listening.
                if self.odom_lost && last_stop_cmd.elapsed() >= Duration::from_millis(100) {
                    self.cmd_vel.publish(Twist::default());
                    last_stop_cmd = Instant::now();
                }
            }
            self.flush_events();
            if !busy {
                // A sample wakes the loop at once (the shield sees a sweep as it comes); goals,
                // cancels and the watchdogs are looked at every ACTION_POLL.
                self.waiter.wait(ACTION_POLL);
            }
        }
        if self.params.skills {
            self.cmd_vel.publish(Twist::default());
        }
        info!("stopped");
    }

    fn on_cloud(&mut self, cloud: &PointCloud2) {
        match acres_ros::cloud::from_cloud(cloud) {
            Ok(points) => {
                let s = scan(&points, &self.scan_cfg);
                self.server.on_scan(s.ahead_m);
                // The shield re-checks the running command at once with the new scan.
                if self.params.skills {
                    if let Some(obs) = self.obs {
                        self.control(&obs);
                    }
                }
            }
            Err(e) => warn!(error = %e, "sweep skipped"),
        }
    }

    fn on_odom(&mut self, o: &Odometry) {
        let obs = observation_of(o);
        if let Some(prev) = self.obs {
            self.odom_m += prev.pose.pos().dist(obs.pose.pos());
        }
        self.obs = Some(obs);
        self.last_odom = Some(Instant::now());
        self.odom_lost = false;
        if self.params.skills {
            self.control(&obs);
        }
        let shield = self.server.shield().holding();
        self.observation.publish(observation_msg(&obs, &self.server, self.odom_m, shield));
    }

    fn control(&mut self, obs: &Observation) {
        let tw = self.server.control(obs);
        self.cmd_vel.publish(Twist {
            linear: Vector3 { x: tw.speed_mps, y: 0.0, z: 0.0 },
            angular: Vector3 { x: 0.0, y: 0.0, z: tw.yaw_rate_rps },
        });
    }

    /// Goals and cancels; true when something came.
    fn serve(&mut self) -> bool {
        let Some(goals) = self.goals.as_mut() else { return false };
        let any = goals.serve(&mut self.server, self.obs.as_ref(), self.params.on_cancel, &self.events);
        if goals.take_accepted() {
            // Every accepted goal arms the deadman, whatever happened before.
            self.armed = Some(Instant::now());
            if self.params.heartbeat_timeout_s <= 0.0 {
                warn!("heartbeat_timeout_s is 0: this goal runs with no deadman (a bench only)");
            }
        }
        any
    }

    /// Beats returned within the grace: the held skill goes on.
    fn release_hold(&mut self) {
        let t_s = self.obs.map_or(0.0, |o| o.t_s);
        if let Some(held_s) = self.server.link_release(t_s) {
            info!(held_s, "heartbeats returned: the skill goes on");
        }
        if let Some(obs) = self.obs {
            self.control(&obs);
        }
    }

    fn watchdogs(&mut self) {
        let t_s = self.obs.map_or(0.0, |o| o.t_s);
        if let Some(last) = self.last_odom {
            let quiet_s = last.elapsed().as_secs_f64();
            if !self.odom_lost && quiet_s > self.params.odom_timeout_s {
                self.odom_lost = true;
                let cause = format!("odometry stopped for {:.1} s", self.params.odom_timeout_s);
                warn!(%cause, "fail-safe");
                self.server.end_running(ResultCode::Failed, cause, t_s);
                self.cmd_vel.publish(Twist::default());
            }
        }
        self.deadman(t_s);
    }

    /// The heartbeat deadman: holds the running goal's skill after `heartbeat_timeout_s` of
    /// silence, applies `on_cancel` after `heartbeat_grace_s`.
    fn deadman(&mut self, t_s: f64) {
        let timeout = self.params.heartbeat_timeout_s;
        let Some(armed) = self.armed else { return };
        // Only a goal's skill is watched: a `return_home` that `on_cancel` started runs by itself.
        let goal_skill = match (self.server.status_ref().id, self.goals.as_ref()) {
            (Some(id), Some(g)) => g.is_goal_skill(id),
            _ => false,
        };
        if timeout <= 0.0 || !goal_skill {
            return;
        }
        let since = self.last_beat.map_or(armed, |b| b.max(armed));
        let quiet_s = since.elapsed().as_secs_f64();
        let grace = self.params.heartbeat_grace_s;
        if quiet_s > grace {
            warn!(grace, on_cancel = ?self.params.on_cancel, "heartbeat lost past the grace");
            self.armed = None;
            let cause = format!("heartbeat lost for {grace:.1} s");
            apply_on_cancel(&mut self.server, self.obs.as_ref(), self.params.on_cancel, cause);
            if let Some(obs) = self.obs {
                self.control(&obs);
            }
        } else if quiet_s > timeout && !self.server.link_held() {
            warn!(timeout, grace, "heartbeat lost: holding the vehicle");
            let cause =
                format!("no heartbeat for {timeout:.1} s: held until beats return (grace {grace:.1} s)");
            self.server.link_hold(cause, t_s);
            self.cmd_vel.publish(Twist::default());
        }
    }

    fn flush_events(&mut self) {
        for e in self.server.drain_events() {
            if let Some(g) = self.goals.as_mut() {
                g.on_event(&e, &self.server);
            }
            self.events.publish(event_msg(&e));
        }
        if let Some(g) = self.goals.as_mut() {
            g.feedback(&self.server);
        }
    }
}

/// Ends the running skill `stopped` with `cause`, then (`return_home`) drives home.
pub fn apply_on_cancel(
    server: &mut SkillServer,
    obs: Option<&Observation>,
    on_cancel: OnCancel,
    cause: String,
) {
    let t_s = obs.map_or(0.0, |o| o.t_s);
    server.end_running(ResultCode::Stopped, cause, t_s);
    if let (OnCancel::ReturnHome, Some(obs)) = (on_cancel, obs) {
        let r = server.request(&SkillRequest::new(SkillKind::ReturnHome), obs);
        if !r.accepted {
            warn!(cause = ?r.cause, "return_home after a cancel was refused");
        }
    }
}
