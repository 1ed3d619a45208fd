//! The world of a run behind one interface, [`WorldPort`]: the in-process world (`--world core`,
//! [`CoreWorld`]: ACRES Core and the skill server in one loop) implements it now; the link world
//! (the bridge over TCP, `crate::world::link::LinkWorld`) implements the same trait. A link world can
//! be lost ([`WorldPort::lost`]); the in-process world never is.
//!
//! A port gives what a vehicle has (odometry, the skill server's replies, status and events, the
//! scan) and, separately, the simulator's truth ([`WorldPort::truth`]), which only the run log
//! and the simulator profile may read (see `guard`).

pub mod knowledge;
pub mod link;
pub mod safety;
pub mod sim;

use crate::world::sim::CoreSim;
use std::sync::Arc;

use acres_core::lidar::{LidarConfig, Sweep};
use acres_core::objects::ObjectKind;
use acres_farm::geom::{Pose, Vec2};
use acres_vehicle::scan::Scan;
use acres_vehicle::shield::ShieldRule;
use acres_vehicle::{Reply, SkillEvent, SkillRequest, Status, StatusRef};

use crate::scenario::Scenario;

/// What the vehicle knows of its own motion.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct VehicleView {
    /// Mission time, s.
    pub t_s: f64,
    /// Pose.
    pub pose: Pose,
    /// Speed, m/s.
    pub speed_mps: f64,
    /// Distance driven over ground, m (the odometry's).
    pub odom_m: f64,
}

/// The simulator's truth: never a planner input in the vehicle profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Truth {
    /// Objects in the world: id, kind, pose.
    pub objects: Vec<(u32, ObjectKind, Pose)>,
    /// Fuel energy used, MJ.
    pub energy_mj: f64,
    /// Contact in this step.
    pub contact: bool,
    /// Steps with contact so far.
    pub contact_steps: u64,
    /// Last object touched.
    pub contact_object: Option<u32>,
    /// When the LiDAR first returned points from each object, s.
    pub first_seen: std::collections::BTreeMap<u32, f64>,
}

/// The world of a run, as the harness drives it.
pub trait WorldPort {
    /// The control step, s.
    fn dt_s(&self) -> f64;
    /// Mission time, s.
    fn t_s(&self) -> f64;
    /// Advances one control step; true when a new scan is ready.
    fn step(&mut self) -> bool;
    /// Sends a request to the skill server.
    fn request(&mut self, req: &SkillRequest) -> Reply;
    /// The vehicle's odometry.
    fn vehicle(&self) -> VehicleView;
    /// The skill server's status, borrowed.
    fn status_ref(&self) -> StatusRef<'_>;
    /// The skill server's status.
    fn status(&self) -> Status {
        self.status_ref().to_status()
    }
    /// The route ahead of the running motion.
    fn route_ahead(&self) -> Vec<Vec2>;
    /// The latest scan.
    fn scan(&self) -> Option<&Scan>;
    /// The LiDAR's pose on the ground (for placing scan returns on the map).
    fn sensor_pose(&self) -> Pose;
    /// The obstacle distance ahead, m.
    fn ahead_m(&self) -> f64;
    /// The shield's rules.
    fn shield_rules(&self) -> Vec<ShieldRule>;
    /// The skill server's events since the last call.
    fn drain_events(&mut self) -> Vec<SkillEvent>;
    /// Object events of the scenario that have not happened yet and still can.
    fn pending_object_events(&self) -> usize;
    /// The simulator's truth, when the world has one.
    fn truth(&self) -> Option<Truth>;
    /// The objects of the simulator's truth alone (the recording's `/acres/objects`).
    fn truth_objects(&self) -> Option<Vec<(u32, ObjectKind, Pose)>> {
        self.truth().map(|t| t.objects)
    }
    /// The digest of the world.
    fn digest(&self) -> String;
    /// The latest LiDAR sweep (its points in the sensor frame), shared, when the world gives it
    /// (recordings keep one now and then without copying it).
    fn sweep(&self) -> Option<&Arc<Sweep>> {
        None
    }
    /// The LiDAR's geometry, when the world gives it (recordings).
    fn lidar(&self) -> Option<LidarConfig> {
        None
    }
    /// Why the world was lost (a link world: socket closed, no pong, silence); `None` while it
    /// is there. A lost world's `step` returns at once.
    fn lost(&self) -> Option<LossCause> {
        None
    }
    /// The counts of the link, when a report is due (a link world, every few seconds).
    fn link_stats(&mut self) -> Option<LinkStats> {
        None
    }
    /// The run ends (a link world tells the bridge, which cancels its goals).
    fn end(&mut self, _cause: &str) {}
    /// Feeds this control step's truth to the safety meter (`dt_s` the step); false when the
    /// world has no truth (a link world: safety is unknown there).
    fn measure_safety(&mut self, _meter: &mut safety::SafetyMeter) -> bool {
        false
    }
    /// The objects' kinds and footprints of the simulator's truth (the safety meter's holds).
    fn truth_footprints(&self) -> Vec<(ObjectKind, acres_farm::geom::Obb)> {
        Vec::new()
    }
}

/// What the planner's tools may read of a world: what a vehicle has (odometry, the skill
/// server's status, the scan, the route ahead, the shield's rules), never the simulator's truth,
/// which a tool reaches only through `RunState::guarded_truth`.
#[derive(Clone, Copy)]
pub struct Sensed<'w>(&'w dyn WorldPort);

impl<'w> Sensed<'w> {
    /// The sensing view of `world`.
    pub fn of(world: &'w dyn WorldPort) -> Self {
        Sensed(world)
    }
    /// The vehicle's odometry.
    pub fn vehicle(&self) -> VehicleView {
        self.0.vehicle()
    }
    /// The skill server's status, borrowed.
    pub fn status_ref(&self) -> StatusRef<'w> {
        self.0.status_ref()
    }
    /// The skill server's status.
    pub fn status(&self) -> Status {
        self.0.status()
    }
    /// The route ahead of the running motion.
    pub fn route_ahead(&self) -> Vec<Vec2> {
        self.0.route_ahead()
    }
    /// The latest scan.
    pub fn scan(&self) -> Option<&'w Scan> {
        self.0.scan()
    }
    /// The LiDAR's pose on the ground.
    pub fn sensor_pose(&self) -> Pose {
        self.0.sensor_pose()
    }
    /// The obstacle distance ahead, m.
    pub fn ahead_m(&self) -> f64 {
        self.0.ahead_m()
    }
    /// The shield's rules.
    pub fn shield_rules(&self) -> Vec<ShieldRule> {
        self.0.shield_rules()
    }
}

/// Why the link was lost. Its `Display` is the `cause` of the `link_lost` row.
#[derive(Debug, Clone, PartialEq)]
pub enum LossCause {
    /// The bridge closed the socket (or reading it failed).
    SocketClosed,
    /// Writing to the socket failed.
    WriteFailed,
    /// A ping got no pong within [`acres_link_protocol::PONG_TIMEOUT_S`].
    NoPong {
        /// The ping's number.
        ping: u64,
    },
    /// No step came for `--link-silent-s`.
    Silent {
        /// The silence allowed, s.
        silent_s: f64,
    },
    /// A skill request got no reply in time.
    NoReply {
        /// The time allowed, s.
        timeout_s: f64,
    },
    /// The vehicle's step is not believable (non-finite or absurd numbers, a time that goes
    /// back or jumps ahead): a fault of the vehicle, the run ends.
    VehicleFault {
        /// What was wrong, naming the step and the field.
        why: String,
    },
}

/// The word of a [`LossCause`]: the `kind` of the `link_lost` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossKind {
    /// The bridge closed the socket (or reading it failed).
    SocketClosed,
    /// Writing to the socket failed.
    WriteFailed,
    /// A ping got no pong in time.
    NoPong,
    /// No step came for `--link-silent-s`.
    Silent,
    /// A skill request got no reply in time.
    NoReply,
    /// The vehicle's step was not believable.
    VehicleFault,
}

words!(LossKind {
    SocketClosed => "socket_closed",
    WriteFailed => "write_failed",
    NoPong => "no_pong",
    Silent => "silent",
    NoReply => "no_reply",
    VehicleFault => "vehicle_fault",
});

impl LossCause {
    /// Its word.
    pub fn kind(&self) -> LossKind {
        match self {
            LossCause::SocketClosed => LossKind::SocketClosed,
            LossCause::WriteFailed => LossKind::WriteFailed,
            LossCause::NoPong { .. } => LossKind::NoPong,
            LossCause::Silent { .. } => LossKind::Silent,
            LossCause::NoReply { .. } => LossKind::NoReply,
            LossCause::VehicleFault { .. } => LossKind::VehicleFault,
        }
    }
}

impl std::fmt::Display for LossCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LossCause::SocketClosed => write!(f, "the socket closed"),
            LossCause::WriteFailed => write!(f, "the socket closed (write failed)"),
            LossCause::NoPong { ping } => {
                write!(f, "ping {ping} got no pong in {} s", acres_link_protocol::PONG_TIMEOUT_S)
            }
            LossCause::Silent { silent_s } => write!(f, "no step for {silent_s} s"),
            LossCause::NoReply { timeout_s } => write!(f, "no reply to a skill request in {timeout_s} s"),
            LossCause::VehicleFault { why } => write!(f, "a fault of the vehicle: {why}"),
        }
    }
}

/// The counts of a link, both ways.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkStats {
    /// Lines sent to the bridge.
    pub sent: u64,
    /// Lines received from the bridge.
    pub received: u64,
    /// Bytes sent.
    pub bytes_sent: u64,
    /// Bytes received.
    pub bytes_received: u64,
    /// Sweeps dropped: by the bridge (replaced by a newer one), and by the harness (no step
    /// within one control step of their stamp, or replaced before they were taken).
    pub dropped_sweeps: u64,
    /// The newest ping round trip, ms.
    pub ping_rtt_ms: Option<f64>,
    /// Wall seconds since the last step came: the link's silence (about 0 while steps flow;
    /// not how late they are).
    pub observation_age_s: f64,
    /// How late the steps come ([`link::lateness`]).
    pub lateness: link::lateness::LatenessFigures,
}

/// ACRES Core in the process.
#[derive(Debug)]
pub struct CoreWorld {
    sim: CoreSim,
    mount_forward_m: f64,
    /// The objects' footprints, kept between steps (rebuilt when the objects change).
    footprints: (u64, Vec<(ObjectKind, acres_farm::geom::Obb)>),
    /// Object events applied so far (the footprints' version).
    object_changes: u64,
}

impl CoreWorld {
    /// The world of a scenario, with its object events scheduled.
    pub fn new(sc: &Scenario, seed: u64) -> CoreWorld {
        let (wc, events) = acres_core::world_of(sc, seed);
        let mount_forward_m = wc.lidar.as_ref().map_or(0.0, |l| l.mount_forward_m);
        let mut sim = CoreSim::new(wc, acres_vehicle::server_options(sc));
        sim.server.set_local_planner(acres_local_planners::factory_of(sc));
        // The scenario's learned skills (checked when the scenario was loaded; see
        // scenario_tools in the tools room for one that cannot be loaded now).
        match acres_vehicle::learned::scenario_skills(sc) {
            Ok(skills) => sim.server.add_learned(skills),
            Err(e) => eprintln!("acres-harness: the scenario's learned skills are left out: {e}"),
        }
        sim.world.schedule(events);
        CoreWorld { sim, mount_forward_m, footprints: (u64::MAX, Vec::new()), object_changes: 0 }
    }
}

impl WorldPort for CoreWorld {
    fn dt_s(&self) -> f64 {
        self.sim.world.config().dt_s
    }
    fn t_s(&self) -> f64 {
        self.sim.world.t_s()
    }
    fn step(&mut self) -> bool {
        let s = self.sim.step();
        self.object_changes += u64::from(s.objects_changed);
        s.scan
    }
    fn request(&mut self, req: &SkillRequest) -> Reply {
        self.sim.request(req)
    }
    fn vehicle(&self) -> VehicleView {
        let o = self.sim.world.odometry();
        VehicleView {
            t_s: o.t_s,
            pose: o.pose,
            speed_mps: o.speed_mps,
            odom_m: self.sim.world.vehicle().odom_m,
        }
    }
    fn status_ref(&self) -> StatusRef<'_> {
        self.sim.server.status_ref()
    }
    fn route_ahead(&self) -> Vec<Vec2> {
        self.sim.server.route_ahead()
    }
    fn scan(&self) -> Option<&Scan> {
        self.sim.last_scan()
    }
    fn sensor_pose(&self) -> Pose {
        let p = self.sim.world.odometry().pose;
        let s = p.to_map(Vec2::new(self.mount_forward_m, 0.0));
        Pose { x: s.x, y: s.y, yaw: p.yaw }
    }
    fn ahead_m(&self) -> f64 {
        self.sim.server.ahead_m()
    }
    fn shield_rules(&self) -> Vec<ShieldRule> {
        self.sim.server.shield().rules()
    }
    fn drain_events(&mut self) -> Vec<SkillEvent> {
        self.sim.drain_events()
    }
    fn pending_object_events(&self) -> usize {
        self.sim.world.pending_events_due()
    }
    fn truth(&self) -> Option<Truth> {
        let w = &self.sim.world;
        Some(Truth {
            objects: self.truth_objects().unwrap_or_default(),
            energy_mj: w.energy_mj(),
            contact: w.contact(),
            contact_steps: w.contact_steps(),
            contact_object: w.contact_object(),
            first_seen: w.seen_times().clone(),
        })
    }
    fn truth_objects(&self) -> Option<Vec<(u32, ObjectKind, Pose)>> {
        Some(self.sim.world.objects().values().map(|o| (o.id, o.kind, o.pose)).collect())
    }
    fn digest(&self) -> String {
        self.sim.world.digest()
    }
    fn sweep(&self) -> Option<&Arc<Sweep>> {
        Some(self.sim.world.sweep_shared())
    }
    fn lidar(&self) -> Option<LidarConfig> {
        self.sim.world.config().lidar.clone()
    }
    fn measure_safety(&mut self, meter: &mut safety::SafetyMeter) -> bool {
        if self.footprints.0 != self.object_changes {
            self.footprints = (self.object_changes, self.truth_footprints());
        }
        let w = &self.sim.world;
        let cache = &self.footprints;
        meter.step(safety::SafetySample {
            dt_s: w.config().dt_s,
            footprint: w.vehicle().footprint(&w.config().vehicle),
            speed_mps: w.vehicle().speed_mps,
            objects: &cache.1,
            contact: w.contact(),
        });
        true
    }
    fn truth_footprints(&self) -> Vec<(ObjectKind, acres_farm::geom::Obb)> {
        self.sim.world.objects().values().map(|o| (o.kind, o.body().obb)).collect()
    }
}
