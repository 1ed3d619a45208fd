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
//! The loop's thread only takes a [`Shot`] of what it must read from the world (numbers, the
//! status, the scan's ranges, a copy of the points when a cloud is due, the objects when they
//! are due); one writer thread turns the shots into messages, encodes them (CDR), writes both
//! files and compresses their chunks, overlapping the simulation.
//!
//! - [`bag`]: one MCAP file (schemas, channels, QoS metadata, chunk closing, `.part` and rename).
//! - [`compose`]: the writer thread's side: shots, events and rows as messages of both files.
//! - [`convert`]: state, events and rows as messages.
//! - [`markers`]: the map and the objects as marker arrays.
//! - [`sink`]: the writer thread, the batches handed to it and when.

pub mod bag;
pub mod check;
pub mod compose;
pub mod convert;
pub mod markers;
pub mod sink;

use std::path::Path;
use std::sync::{Arc, Mutex};

use acres_core::objects::ObjectKind;
use acres_farm::geom::Pose;
use acres_farm::Map;
use acres_vehicle::Status;

use self::bag::{Bag, BagError};
use self::compose::Files;
use self::sink::Sink;
use crate::runlog::rows::Row;
use crate::world::{VehicleView, WorldPort};

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

/// `/lidar/points` keeps one sweep in this many (10 Hz sweeps: 1 Hz). The clouds were a third
/// of the recording's time at 2 Hz; the files barely shrink at 1 Hz (each chunk pays for about
/// one cloud, the ground returns repeating from sweep to sweep), but the time halves.
pub const POINTS_EVERY_SWEEPS: u64 = 10;
/// `/acres/objects` is written this often, s of mission time (and at t = 0).
pub const OBJECTS_EVERY_S: f64 = 1.0;

/// Point buffers handed back by the writer thread for the next clouds (a fresh 70 kB buffer a
/// cloud costs the loop its page faults).
#[derive(Debug, Clone, Default)]
pub struct PointBuffers(Arc<Mutex<Vec<Vec<u8>>>>);

impl PointBuffers {
    /// Buffers kept at most.
    const KEEP: usize = 8;

    /// A buffer to fill (a kept one, else a new one).
    pub fn take(&self) -> Vec<u8> {
        self.0.lock().ok().and_then(|mut v| v.pop()).unwrap_or_default()
    }

    /// Hands a buffer back.
    pub fn give(&self, buf: Vec<u8>) {
        if let Ok(mut v) = self.0.lock() {
            if v.len() < Self::KEEP {
                v.push(buf);
            }
        }
    }
}

/// What the recorder reads from the world after one control step: enough for every message of
/// the step, taken on the loop's thread and turned into messages on the writer thread.
#[derive(Debug, Clone)]
pub struct Shot {
    /// The vehicle (mission time, pose, speed, odometry).
    pub vehicle: VehicleView,
    /// The skill server's status.
    pub status: Status,
    /// The obstacle distance ahead, m.
    pub ahead_m: f64,
    /// The loop's fuel energy estimate, MJ.
    pub energy_estimate_mj: f64,
    /// The scan function's ranges when the LiDAR swept in this step, m.
    pub scan_ranges_m: Option<Vec<f32>>,
    /// The sweep as `/lidar/points` data when a cloud is due ([`convert::point_bytes`]).
    pub points: Option<Vec<u8>>,
    /// The objects (simulator truth) when they are due: id, kind, pose.
    pub objects: Option<Vec<(u32, ObjectKind, Pose)>>,
}

/// What the loop hands to the writer thread, in the order of the run.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // a step is nearly every item: no box for it
pub enum Item {
    /// The world after a control step.
    Step(Shot),
    /// An event of the skill server (both files).
    Event(acres_vehicle::SkillEvent),
    /// A row of the planner's timeline: wake, model_send, model_reply, model_error, tool,
    /// plan_check.
    Row(Box<Row>),
}

/// Writes both recordings of one run.
#[derive(Debug)]
pub struct Recorder {
    sink: Sink,
    buffers: PointBuffers,
    sweeps: u64,
    next_objects_s: f64,
}

impl Recorder {
    /// Creates `episode.mcap.part` and `episode.interface.mcap.part` in `folder` and records
    /// the start: the static transforms, the map, and the world at t = 0.
    pub fn create(folder: &Path, map: &Map, world: &dyn WorldPort) -> Result<Recorder, BagError> {
        let episode = Bag::create(&folder.join(EPISODE_FILE))?;
        let interface = Bag::create(&folder.join(INTERFACE_FILE))?;
        let buffers = PointBuffers::default();
        let lidar = world.lidar().unwrap_or_default();
        let files = Files::create(episode, interface, map, lidar, buffers.clone())?;
        let mut rec = Recorder { sink: Sink::spawn(files), buffers, sweeps: 0, next_objects_s: 0.0 };
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
        let vehicle = world.vehicle();
        let (mut scan_ranges_m, mut points, mut objects) = (None, None, None);
        if swept {
            scan_ranges_m = world.scan().map(|s| s.ranges_m.to_vec());
            if self.sweeps.is_multiple_of(POINTS_EVERY_SWEEPS) {
                points = world.sweep_points().map(|p| {
                    let mut buf = self.buffers.take();
                    convert::point_bytes_into(p, &mut buf);
                    buf
                });
            }
            self.sweeps += 1;
        }
        if vehicle.t_s + 1e-9 >= self.next_objects_s {
            self.next_objects_s += OBJECTS_EVERY_S;
            objects = world.truth().map(|t| t.objects);
        }
        let shot = Shot {
            vehicle,
            status: world.status(),
            ahead_m: world.ahead_m(),
            energy_estimate_mj,
            scan_ranges_m,
            points,
            objects,
        };
        self.sink.push(Item::Step(shot))
    }

    /// Records one event of the skill server (both files).
    pub fn on_event(&mut self, e: &acres_vehicle::SkillEvent) -> Result<(), BagError> {
        self.sink.push(Item::Event(e.clone()))
    }

    /// Records the planner's timeline from the run rows: wake-ups, model calls (when the reply
    /// or the error comes, with the request's time), tool calls and plan verdicts. Such a row
    /// hands what waits to the writer thread at once: the loop may wait for a model after it.
    pub fn on_row(&mut self, row: &Row) -> Result<(), BagError> {
        match row {
            Row::Wake(_)
            | Row::ModelSend(_)
            | Row::ModelReply(_)
            | Row::ModelError(_)
            | Row::Tool(_)
            | Row::PlanCheck(_) => {
                self.sink.push(Item::Row(Box::new(row.clone())))?;
                self.sink.send()
            }
            _ => Ok(()),
        }
    }

    /// Writes both summaries and renames both files to their final names.
    pub fn finish(self) -> Result<(), BagError> {
        self.sink.finish()
    }
}
