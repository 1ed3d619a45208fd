//! The episode recordings of a run: `episode.mcap` (what the vehicle did and what the planner
//! thought, on the mission clock) and `episode.interface.mcap` (the vehicle's interface only),
//! both rosbag2-compatible MCAP (see [`bag`] and `docs/run-folder.md` for topics and rates).
//!
//! The [`Recorder`] only reads: the loop hands it the world after each control step
//! ([`Recorder::on_step`]), each skill-server event ([`Recorder::on_event`]) and each run row
//! ([`Recorder::on_row`]: wake-ups, model calls, tool calls, plan verdicts). It never changes
//! the world, so a recorded run's digest equals an unrecorded one's. Every message's log and
//! publish time is its mission time in nanoseconds.
//!
//! - [`bag`]: one MCAP file (schemas, channels, QoS metadata, flushes, `.part` and rename).
//! - [`convert`]: state, events and rows as messages.
//! - [`markers`]: the map and the objects as marker arrays.
//! - [`sink`]: a bag on its own thread (compression overlaps the simulation).

pub mod bag;
pub mod check;
pub mod convert;
pub mod markers;
pub mod sink;

use std::collections::BTreeMap;
use std::path::Path;

use acres_farm::Map;
use acres_msgs::acres_interfaces::{ModelCall, Observation, PlanVerdict, PlannerWake, SkillEvent, ToolCall};
use acres_msgs::builtin_interfaces::Time;
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::rosgraph_msgs::Clock;
use acres_msgs::sensor_msgs::{LaserScan, PointCloud2};
use acres_msgs::tf2_msgs::TFMessage;
use acres_msgs::visualization_msgs::MarkerArray;
use acres_msgs::Message;

use self::bag::{time_ns, Bag, BagError, Qos};
use self::sink::Sink;
use crate::runlog::rows::{ModelSendRow, Row};
use crate::world::WorldPort;

/// The episode file's name in a run folder.
pub const EPISODE_FILE: &str = "episode.mcap";
/// The interface file's name in a run folder.
pub const INTERFACE_FILE: &str = "episode.interface.mcap";

/// The topics every finished `episode.mcap` holds (validate checks them).
pub const EPISODE_TOPICS: &[&str] = &[
    "/clock",
    "/tf",
    "/tf_static",
    "/odom",
    "/lidar/points",
    "/scan",
    "/acres/map",
    "/acres/objects",
    "/acres/observation",
    "/acres/events",
    "/acres/planner/wake",
    "/acres/planner/model_call",
    "/acres/planner/tool_call",
    "/acres/planner/plan_verdict",
];
/// The topics of `episode.interface.mcap`.
pub const INTERFACE_TOPICS: &[&str] = &["/acres/clock", "/acres/observation", "/acres/events"];

/// `/lidar/points` keeps one sweep in this many (10 Hz sweeps: 2 Hz).
pub const POINTS_EVERY_SWEEPS: u64 = 5;
/// `/acres/objects` is written this often, s of mission time (and at t = 0).
pub const OBJECTS_EVERY_S: f64 = 1.0;

/// The channels of the episode file.
#[derive(Debug, Clone, Copy)]
struct EpisodeChannels {
    clock: u16,
    tf: u16,
    odom: u16,
    points: u16,
    scan: u16,
    objects: u16,
    observation: u16,
    events: u16,
    wake: u16,
    model_call: u16,
    tool_call: u16,
    plan_verdict: u16,
}

/// The channels of the interface file.
#[derive(Debug, Clone, Copy)]
struct InterfaceChannels {
    clock: u16,
    observation: u16,
    events: u16,
}

/// Writes both recordings of one run.
#[derive(Debug)]
pub struct Recorder {
    episode: Sink,
    interface: Sink,
    ep: EpisodeChannels,
    itf: InterfaceChannels,
    sweeps: u64,
    next_objects_s: f64,
    lidar_range_m: f32,
    sweep_period_s: f64,
    sends: BTreeMap<u64, ModelSendRow>,
}

impl Recorder {
    /// Creates `episode.mcap.part` and `episode.interface.mcap.part` in `folder` and records
    /// the start: the static transforms, the map, and the world at t = 0.
    pub fn create(folder: &Path, map: &Map, world: &dyn WorldPort) -> Result<Recorder, BagError> {
        let mut episode = Bag::create(&folder.join(EPISODE_FILE))?;
        let mut interface = Bag::create(&folder.join(INTERFACE_FILE))?;
        let tf_static = episode.channel::<TFMessage>("/tf_static", Qos::LATCHED)?;
        let map_ch = episode.channel::<MarkerArray>("/acres/map", Qos::LATCHED)?;
        let ep = EpisodeChannels {
            clock: episode
                .channel::<Clock>("/clock", Qos { depth: 1, reliable: false, transient_local: false })?,
            tf: episode.channel::<TFMessage>("/tf", Qos::reliable(100))?,
            odom: episode.channel::<Odometry>("/odom", Qos::reliable(10))?,
            points: episode.channel::<PointCloud2>("/lidar/points", Qos::SENSOR)?,
            scan: episode.channel::<LaserScan>("/scan", Qos::SENSOR)?,
            objects: episode.channel::<MarkerArray>("/acres/objects", Qos::reliable(10))?,
            observation: episode.channel::<Observation>("/acres/observation", Qos::reliable(10))?,
            events: episode.channel::<SkillEvent>("/acres/events", Qos::reliable(100))?,
            wake: episode.channel::<PlannerWake>("/acres/planner/wake", Qos::reliable(100))?,
            model_call: episode.channel::<ModelCall>("/acres/planner/model_call", Qos::reliable(100))?,
            tool_call: episode.channel::<ToolCall>("/acres/planner/tool_call", Qos::reliable(100))?,
            plan_verdict: episode
                .channel::<PlanVerdict>("/acres/planner/plan_verdict", Qos::reliable(100))?,
        };
        let itf = InterfaceChannels {
            clock: interface.channel::<Clock>(
                "/acres/clock",
                Qos { depth: 1, reliable: false, transient_local: false },
            )?,
            observation: interface.channel::<Observation>("/acres/observation", Qos::reliable(10))?,
            events: interface.channel::<SkillEvent>("/acres/events", Qos::reliable(100))?,
        };
        let lidar = world.lidar().unwrap_or_default();
        episode.write(tf_static, 0, &convert::tf_static(lidar.mount_forward_m, lidar.mount_height_m))?;
        episode.write(map_ch, 0, &markers::map_markers(map))?;
        let mut rec = Recorder {
            episode: Sink::spawn(episode),
            interface: Sink::spawn(interface),
            ep,
            itf,
            sweeps: 0,
            next_objects_s: 0.0,
            lidar_range_m: lidar.max_range_m as f32,
            sweep_period_s: if lidar.rate_hz > 0.0 { 1.0 / lidar.rate_hz } else { 0.0 },
            sends: BTreeMap::new(),
        };
        rec.on_step(world, 0.0, false)?;
        Ok(rec)
    }

    /// Records the world after a control step: the clock, the transform, the odometry and the
    /// observation each step; the scan and (one in [`POINTS_EVERY_SWEEPS`]) the sweep when the
    /// LiDAR swept; the objects every [`OBJECTS_EVERY_S`].
    pub fn on_step(
        &mut self,
        world: &dyn WorldPort,
        energy_estimate_mj: f64,
        swept: bool,
    ) -> Result<(), BagError> {
        let v = world.vehicle();
        let t_ns = time_ns(v.t_s);
        let clock = Clock { clock: Time::from_secs_f64(v.t_s) };
        self.episode.write(self.ep.clock, t_ns, &clock)?;
        self.interface.write(self.itf.clock, t_ns, &clock)?;
        self.episode.write(self.ep.tf, t_ns, &convert::tf(&v))?;
        self.episode.write(self.ep.odom, t_ns, &convert::odometry(&v))?;
        let obs = convert::observation(&v, &world.status(), world.ahead_m(), energy_estimate_mj);
        let bytes = obs.encode();
        self.episode.write_bytes(self.ep.observation, t_ns, bytes.clone())?;
        self.interface.write_bytes(self.itf.observation, t_ns, bytes)?;
        if swept {
            if let Some(scan) = world.scan() {
                let msg = convert::laser_scan(v.t_s, scan, self.sweep_period_s, self.lidar_range_m);
                self.episode.write(self.ep.scan, t_ns, &msg)?;
            }
            if self.sweeps.is_multiple_of(POINTS_EVERY_SWEEPS) {
                if let Some(points) = world.sweep_points() {
                    self.episode.write(self.ep.points, t_ns, &convert::point_cloud(v.t_s, points))?;
                }
            }
            self.sweeps += 1;
        }
        if v.t_s + 1e-9 >= self.next_objects_s {
            self.next_objects_s += OBJECTS_EVERY_S;
            if let Some(truth) = world.truth() {
                self.episode.write(self.ep.objects, t_ns, &markers::object_markers(v.t_s, &truth.objects))?;
            }
        }
        Ok(())
    }

    /// Records one event of the skill server (both files).
    pub fn on_event(&mut self, e: &acres_vehicle::SkillEvent) -> Result<(), BagError> {
        let t_ns = time_ns(e.t_s);
        let bytes = convert::skill_event(e).encode();
        self.episode.write_bytes(self.ep.events, t_ns, bytes.clone())?;
        self.interface.write_bytes(self.itf.events, t_ns, bytes)
    }

    /// Records the planner's timeline from the run rows: wake-ups, model calls (when the reply
    /// or the error comes, with the request's time), tool calls and plan verdicts.
    pub fn on_row(&mut self, row: &Row) -> Result<(), BagError> {
        let t_ns = time_ns(row.t());
        match row {
            Row::Wake(w) => self.episode.write(self.ep.wake, t_ns, &convert::planner_wake(w)),
            Row::ModelSend(s) => {
                self.sends.insert(s.call, s.clone());
                Ok(())
            }
            Row::ModelReply(r) => {
                let msg = convert::model_call_reply(self.sends.remove(&r.call).as_ref(), r);
                self.episode.write(self.ep.model_call, t_ns, &msg)
            }
            Row::ModelError(e) => {
                let msg = convert::model_call_error(self.sends.remove(&e.call).as_ref(), e);
                self.episode.write(self.ep.model_call, t_ns, &msg)
            }
            Row::Tool(t) => self.episode.write(self.ep.tool_call, t_ns, &convert::tool_call(t)),
            Row::PlanCheck(p) => self.episode.write(self.ep.plan_verdict, t_ns, &convert::plan_verdict(p)),
            _ => Ok(()),
        }
    }

    /// Writes both summaries and renames both files to their final names.
    pub fn finish(self) -> Result<(), BagError> {
        self.episode.finish()?;
        self.interface.finish()?;
        Ok(())
    }
}
