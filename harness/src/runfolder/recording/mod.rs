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
//! status, the scan's ranges, the sweep (shared, not copied) when a cloud is due, the objects when they
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

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use acres_core::lidar::Sweep;
use acres_core::objects::ObjectKind;
use acres_farm::geom::Pose;
use acres_farm::Map;
use acres_vehicle::{Status, StatusRef};

use self::bag::{Bag, BagError};
use self::compose::Files;
use self::sink::Sink;
use crate::runfolder::rows::Row;
use crate::world::{VehicleView, WorldPort};

pub use crate::runfolder::kinds::Record;

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

/// `/lidar/points` keeps one sweep in this many while the scan sees something (a return within
/// the LiDAR's range in the scan function's ranges): 10 Hz sweeps, 1 Hz clouds.
pub const POINTS_EVERY_SWEEPS_SEEING: u64 = 10;
/// `/lidar/points` keeps one sweep in this many while the scan sees nothing (ground only):
/// 0.2 Hz clouds. The clouds are most of the bytes a recording compresses (74 of 119 MB for
/// t1_05 at 1 Hz), and a cloud of bare ground repeats the one before it.
pub const POINTS_EVERY_SWEEPS_CLEAR: u64 = 50;

/// Which sweeps `/lidar/points` keeps: the first one, then one when [`POINTS_EVERY_SWEEPS_SEEING`]
/// sweeps have passed since the last cloud and this sweep's scan sees something, or
/// [`POINTS_EVERY_SWEEPS_CLEAR`] have passed.
#[derive(Debug, Clone, Copy, Default)]
pub struct CloudRate {
    /// Sweeps since the last cloud kept (`None` before the first).
    since: Option<u64>,
}

impl CloudRate {
    /// True when this sweep's cloud is kept; `seeing`: its scan sees something.
    pub fn keep(&mut self, seeing: bool) -> bool {
        let since = self.since.map_or(u64::MAX, |n| n + 1);
        let every = if seeing { POINTS_EVERY_SWEEPS_SEEING } else { POINTS_EVERY_SWEEPS_CLEAR };
        let keep = since >= every;
        self.since = Some(if keep { 0 } else { since });
        keep
    }
}
/// `/acres/objects` is written this often, s of mission time (and at t = 0).
pub const OBJECTS_EVERY_S: f64 = 1.0;

/// What the recorder reads from the world after one control step: enough for every message of
/// the step, taken on the loop's thread and turned into messages on the writer thread.
#[derive(Debug, Clone)]
pub struct Shot {
    /// The vehicle (mission time, pose, speed, odometry).
    pub vehicle: VehicleView,
    /// The skill server's status (its numbers, or all of it when more changed).
    pub status: StatusShot,
    /// The obstacle distance ahead, m.
    pub ahead_m: f64,
    /// The loop's fuel energy estimate, MJ.
    pub energy_estimate_mj: f64,
    /// The scan function's ranges when the LiDAR swept in this step, m.
    pub scan_ranges_m: Option<Vec<f32>>,
    /// The sweep, shared with the world, when a cloud is due (the writer thread makes its
    /// `/lidar/points` data, [`convert::point_bytes`]).
    pub sweep: Option<Arc<Sweep>>,
    /// The objects (simulator truth) when they are due: id, kind, pose.
    pub objects: Option<Vec<(u32, ObjectKind, Pose)>>,
}

/// The skill server's status as a shot carries it. Most control steps change only its numbers:
/// the running motion's progress and metres left, and while a scout runs one field's coverage;
/// then only those go with the shot, else the whole status. The writer thread keeps the status
/// of the shots before ([`compose`]), so every observation written is the status of its step.
#[derive(Debug, Clone)]
pub enum StatusShot {
    /// The status of the shot before, with these numbers.
    Numbers {
        /// Fraction of the running motion done.
        progress: f64,
        /// Metres left on the route.
        remaining_m: Option<f64>,
        /// The coverage that changed: its place in the coverage map (in key order) and value.
        coverage: Option<(usize, f64)>,
    },
    /// The whole status.
    Full(Box<Status>),
}

impl StatusShot {
    /// The shot of `now` after the status `last` (updated to `now`). When both are views of the
    /// same server at the same [`StatusRef::revision`], only the numbers are compared.
    pub fn take(last: &mut Option<LastStatus>, now: StatusRef<'_>) -> StatusShot {
        if let Some(l) = last.as_mut() {
            let same_revision = now.revision.is_some() && l.revision == now.revision;
            let numbers = if same_revision {
                coverage_changed(&l.status.coverage, now.coverage, false)
            } else {
                numbers_changed(l.status.view(), now)
            };
            debug_assert!(
                !same_revision || numbers == numbers_changed(l.status.view(), now),
                "the status changed more than its numbers at the same revision: {:?} -> {now:?}",
                l.status
            );
            if let Some(coverage) = numbers {
                l.status.progress = now.progress;
                l.status.remaining_m = now.remaining_m;
                l.revision = now.revision;
                if let Some((i, c)) = coverage {
                    StatusShot::set_coverage(&mut l.status, i, c);
                }
                return StatusShot::Numbers {
                    progress: now.progress,
                    remaining_m: now.remaining_m,
                    coverage,
                };
            }
        }
        let full = now.to_status();
        *last = Some(LastStatus { status: full.clone(), revision: now.revision });
        StatusShot::Full(Box::new(full))
    }

    /// Applies the shot to the status of the shots before.
    pub fn apply(&mut self, status: &mut Status) {
        match self {
            StatusShot::Numbers { progress, remaining_m, coverage } => {
                status.progress = *progress;
                status.remaining_m = *remaining_m;
                if let Some((i, c)) = *coverage {
                    StatusShot::set_coverage(status, i, c);
                }
            }
            // Swapped: the status before goes back to the loop's thread with the batch.
            StatusShot::Full(new) => std::mem::swap(status, new),
        }
    }

    fn set_coverage(status: &mut Status, i: usize, c: f64) {
        if let Some(v) = status.coverage.values_mut().nth(i) {
            *v = c;
        }
    }
}

/// The status of the last shot, with the revision of the view it was taken from.
#[derive(Debug, Clone, PartialEq)]
pub struct LastStatus {
    /// The status.
    pub status: Status,
    /// [`StatusRef::revision`] of its view.
    pub revision: Option<u64>,
}

/// `Some(the coverage that changed, if one did)` when `now` differs from `last` only in the
/// progress, the metres left and at most one field's coverage; `None` when anything else
/// changed. Numbers are compared bit for bit.
fn numbers_changed(last: StatusRef<'_>, now: StatusRef<'_>) -> Option<Option<(usize, f64)>> {
    let same_bits = |a: Option<f64>, b: Option<f64>| a.map(f64::to_bits) == b.map(f64::to_bits);
    let same = last.skill == now.skill
        && last.id == now.id
        && last.state == now.state
        && last.target == now.target
        && same_bits(last.hold_since_s, now.hold_since_s)
        && last.interrupted == now.interrupted
        && last.scouted == now.scouted;
    if !same {
        return None;
    }
    coverage_changed(last.coverage, now.coverage, true)
}

/// `Some(the coverage that changed, if one did)` when at most one value of `now` differs from
/// `last` (bit for bit) and they have as many fields (the same fields, when `keys` compares
/// them too); else `None`.
fn coverage_changed(
    last: &BTreeMap<String, f64>,
    now: &BTreeMap<String, f64>,
    keys: bool,
) -> Option<Option<(usize, f64)>> {
    if last.len() != now.len() {
        return None;
    }
    let mut changed = None;
    for (i, ((ka, va), (kb, vb))) in last.iter().zip(now).enumerate() {
        if keys && ka != kb {
            return None;
        }
        if va.to_bits() != vb.to_bits() {
            if changed.is_some() {
                return None;
            }
            changed = Some((i, *vb));
        }
    }
    Some(changed)
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
    clouds: CloudRate,
    next_objects_s: f64,
    /// The status of the last shot.
    status: Option<LastStatus>,
    /// The episode file is recorded (else the interface file only).
    episode: bool,
}

impl Recorder {
    /// Creates `episode.mcap.part` and `episode.interface.mcap.part` in `folder` (an error
    /// here is returned at once) and records the start: the static transforms, the map, and the
    /// world at t = 0.
    /// With `record` [`Record::Interface`] only the interface file is made, and the loop's
    /// thread takes no scan, sweep or objects for it.
    pub fn create(
        folder: &Path,
        map: &Map,
        world: &dyn WorldPort,
        record: Record,
    ) -> Result<Recorder, BagError> {
        let with_episode = record == Record::All;
        let episode = if with_episode { Some(Bag::create(&folder.join(EPISODE_FILE))?) } else { None };
        let interface = Bag::create(&folder.join(INTERFACE_FILE))?;
        let lidar = world.lidar().unwrap_or_default();
        let map = markers::map_markers(map);
        // The channels, the schemas and the first chunk's compressor are made on the writer
        // thread (half a millisecond); an error there stops the recording at the next hand-over.
        let files = move || Files::create(episode, interface, &map, lidar);
        let mut rec = Recorder {
            sink: Sink::spawn(files),
            clouds: CloudRate::default(),
            next_objects_s: 0.0,
            status: None,
            episode: with_episode,
        };
        rec.on_step(world, 0.0, false)?;
        Ok(rec)
    }

    /// Records the world after a control step: the clock, the transform, the odometry and the
    /// observation each step; the scan and (as [`CloudRate`] keeps them) the sweep when the LiDAR
    /// swept; the objects every [`OBJECTS_EVERY_S`].
    pub fn on_step(
        &mut self,
        world: &dyn WorldPort,
        energy_estimate_mj: f64,
        swept: bool,
    ) -> Result<(), BagError> {
        let vehicle = world.vehicle();
        let (mut scan_ranges_m, mut sweep, mut objects) = (None, None, None);
        if swept && self.episode {
            let scan = world.scan();
            scan_ranges_m = scan.map(|s| {
                let mut buf = self.sink.scan_buffer();
                buf.extend_from_slice(&s.ranges_m);
                buf
            });
            // A sector's range is the nearest of its bins: any finite one is a return in range.
            let seeing = scan.is_some_and(|s| s.sectors_m.iter().any(|r| r.is_finite()));
            if self.clouds.keep(seeing) {
                sweep = world.sweep().cloned();
            }
        }
        if self.episode && vehicle.t_s + 1e-9 >= self.next_objects_s {
            self.next_objects_s += OBJECTS_EVERY_S;
            objects = world.truth_objects();
        }
        let shot = Shot {
            vehicle,
            status: StatusShot::take(&mut self.status, world.status_ref()),
            ahead_m: world.ahead_m(),
            energy_estimate_mj,
            scan_ranges_m,
            sweep,
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
    pub fn on_row(&mut self, row: Row) -> Result<(), BagError> {
        if !self.episode {
            return Ok(());
        }
        match row {
            Row::Wake(_)
            | Row::ModelSend(_)
            | Row::ModelReply(_)
            | Row::ModelError(_)
            | Row::Tool(_)
            | Row::PlanCheck(_) => {
                self.sink.push(Item::Row(Box::new(row)))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use acres_vehicle::{SkillKind, SkillState};

    #[test]
    fn clouds_are_kept_each_tenth_sweep_while_the_scan_sees_something_else_each_fiftieth() {
        let mut rate = CloudRate::default();
        let kept =
            |rate: &mut CloudRate, seeing: bool, n: usize| (0..n).filter(|_| rate.keep(seeing)).count();
        // The first sweep, then one in 50 while clear.
        assert!(rate.keep(false));
        assert_eq!(kept(&mut rate, false, 49), 0);
        assert!(rate.keep(false));
        // Something comes into view 20 sweeps after the last cloud: kept at once (10 have
        // passed), then one in 10.
        assert_eq!(kept(&mut rate, false, 19), 0);
        assert!(rate.keep(true));
        assert_eq!(kept(&mut rate, true, 30), 3);
        // Clear again: the next cloud 50 sweeps after the last.
        assert_eq!(kept(&mut rate, false, 49), 0);
        assert!(rate.keep(false));
    }

    fn scouting(progress: f64, f51: f64) -> Status {
        Status {
            skill: Some(SkillKind::Scout),
            id: Some(3),
            state: SkillState::Running,
            progress,
            target: Some("F51".into()),
            remaining_m: Some(100.0 - progress * 100.0),
            hold_since_s: None,
            interrupted: None,
            coverage: BTreeMap::from([("F51".to_string(), f51), ("F52".to_string(), 1.0)]),
            scouted: vec!["F52".into()],
        }
    }

    #[test]
    fn a_status_shot_carries_only_the_numbers_when_only_they_changed_and_rebuilds_every_status() {
        let mut steps = vec![Status::default(), scouting(0.1, 0.1), scouting(0.2, 0.2), scouting(0.3, 0.2)];
        // Two coverages change at once (the whole status), then only numbers again.
        let mut two = scouting(0.3, 0.25);
        two.coverage.insert("F52".into(), 0.5);
        steps.push(two.clone());
        two.progress = 0.4;
        steps.push(two);
        // The shield holds: more than numbers change.
        let mut held = scouting(0.4, 0.25);
        held.state = SkillState::Holding;
        held.hold_since_s = Some(12.0);
        steps.push(held);
        let (mut last, mut written) = (None, Status::default());
        let mut kinds = Vec::new();
        for now in &steps {
            let mut shot = StatusShot::take(&mut last, now.view());
            kinds.push(matches!(shot, StatusShot::Numbers { .. }));
            shot.apply(&mut written);
            assert_eq!(&written, now);
            assert_eq!(last.as_ref().map(|l| &l.status), Some(now));
        }
        assert_eq!(kinds, [false, false, true, true, false, true, false]);
    }

    #[test]
    fn at_the_same_revision_only_the_numbers_are_compared_and_a_new_revision_compares_all() {
        let (mut last, mut written) = (None, Status::default());
        let mut take = |now: &Status, revision: Option<u64>| {
            let mut shot = StatusShot::take(&mut last, StatusRef { revision, ..now.view() });
            shot.apply(&mut written);
            assert_eq!(&written, now);
            match shot {
                StatusShot::Numbers { coverage, .. } => Some(coverage),
                StatusShot::Full(_) => None,
            }
        };
        assert_eq!(take(&scouting(0.1, 0.1), Some(7)), None);
        // Same revision: the changed coverage found by its place among the values.
        assert_eq!(take(&scouting(0.2, 0.2), Some(7)), Some(Some((0, 0.2))));
        // A new revision with only numbers changed: compared in full, still numbers.
        assert_eq!(take(&scouting(0.3, 0.2), Some(8)), Some(None));
        // A new revision with a new field scouted: the whole status.
        let mut more = scouting(0.3, 0.2);
        more.scouted.push("F51".into());
        assert_eq!(take(&more, Some(9)), None);
        // Unknown revisions (an owned status' view) are always compared.
        let mut other = more.clone();
        other.target = Some("F52".into());
        assert_eq!(take(&other, None), None);
        assert_eq!(take(&other, None), Some(None));
    }
}
