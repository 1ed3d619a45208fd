//! The state of one run that the loop and the tools share: the world behind the guard, the
//! knowledge store, the accepted plan, notes, the visual memory, counters, and the run log.

use acres_farm::HOME;
use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::planners::planning::costs::{CostTable, PLANNED_ENERGY_FACTOR, PLANNED_TIME_FACTOR};
use acres_farm::geom::{Pose, Vec2};
use acres_farm::route::{leg_path, LaneGraph, Leg};

use crate::planners::interface::Usage;
use crate::runfolder::recording::bag::BagError;
use crate::runfolder::recording::Recorder;
use crate::runfolder::rows::{FrameRow, Mode, Profile, Row, View as RowView};
use crate::runfolder::writer::RunWriter;
use crate::scenario::Scenario;
use crate::tools::picture::{self, Inset, Scene, View};
use crate::world::knowledge::{cell_center, scan_points, Knowledge};
use crate::world::{Sensed, Truth, WorldPort};
use acres_vehicle::{Reply, SkillRequest};

/// The side an inset around the vehicle holds whole, m.
pub const VEHICLE_INSET_M: f64 = 60.0;

/// A read of a truth value in the vehicle profile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("TruthRead: {what} is simulator truth; the vehicle profile does not give it")]
pub struct TruthRead {
    /// What was read.
    pub what: String,
}

/// An accepted plan.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptedPlan {
    /// The fields in visit order.
    pub visits: Vec<String>,
    /// Ends at home.
    pub return_home: bool,
    /// Index of the next visit.
    pub next: usize,
    /// The legs' paths, for pictures and warnings: `(leg, path)`.
    pub legs: Vec<(Leg, Vec<Vec2>)>,
}

impl AcceptedPlan {
    /// The next field to visit.
    pub fn next_visit(&self) -> Option<&str> {
        self.visits.get(self.next).map(String::as_str)
    }
}

/// One picture of the visual memory.
#[derive(Debug, Clone)]
pub struct Frame {
    /// `f0001`, ...
    pub id: String,
    /// Mission time, s.
    pub t_s: f64,
    /// The PNG.
    pub png: Arc<Vec<u8>>,
    /// The view.
    pub view: RowView,
    /// The region asked for.
    pub region: Option<Value>,
    /// Where its pixels are on the map.
    pub geom: Geometry,
}

/// Where a stored frame's pixels are on the map: the view box and scale of its map area, and its
/// inset's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// `[min_x, min_y, max_x, max_y]` of the map area, m.
    pub view_box: [f64; 4],
    /// Metres per pixel of the map area.
    pub m_per_px: f64,
    /// The inset's view box and metres per pixel, or `None`.
    pub inset: Option<([f64; 4], f64)>,
}

/// The start of a planned leg that begins off the cost table (the vehicle's position): its key is
/// `goto:here>F53`.
pub const HERE: &str = "here";

/// The estimated cost of one leg of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct LegEstimate {
    /// The leg (`goto` from `here` when it starts off the table); its key is `goto:H>F53`, ...
    pub leg: Leg,
    /// Planned time (table × 1.6), s.
    pub planned_time_s: f64,
    /// Planned energy (table × 1.5), MJ.
    pub planned_energy_mj: f64,
    /// The leg's path.
    pub path: Vec<Vec2>,
}

/// Counters of the loop (the score's counts).
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Wake-ups.
    pub wake_ups: u64,
    /// Tool calls.
    pub tool_calls: u64,
    /// Refused plans.
    pub refused_plans: u64,
    /// USD.
    pub usd: f64,
    /// ask_operator uses.
    pub interventions: u64,
    /// Thinking time charged on the mission clock, s.
    pub charged_s: f64,
    /// Repairs.
    pub reminders: u64,
    /// Arguments that failed their schema, unknown tools.
    pub schema_errors: u64,
    /// Tool calls read from text.
    pub fallback_protocol: u64,
    /// Pictures replaced by text.
    pub pictures_dropped: u64,
    /// Exchanges left out of the history to fit the context window.
    pub context_trims: u64,
    /// Tool calls that came as a schema-constrained JSON object.
    pub constrained_calls: u64,
    /// Calls without a reply.
    pub model_errors: u64,
    /// Stuck wake-ups.
    pub stuck_wake_ups: u64,
    /// Model calls.
    pub model_calls: u64,
    /// Replies that logged reasoning.
    pub reasoning_replies: u64,
    /// Replies whose model reasoned without giving the text.
    pub hidden_reasoning_replies: u64,
    /// The tokens of every reply, by kind (their sum: `usage.total()`).
    pub usage: Usage,
}

/// What the mission is now (a part of [`RunState`]).
#[derive(Debug, Default)]
pub struct Mission {
    /// The accepted plan.
    pub plan: Option<AcceptedPlan>,
    /// Fields removed from the mission (scouted, or dropped from an accepted plan).
    pub removed: BTreeSet<String>,
    /// Operator requests so far: `(t, text)`.
    pub requests: Vec<(f64, String)>,
    /// The timer of `wait` while a skill runs: mission time it fires.
    pub timer_s: Option<f64>,
    /// A place of interest (the last blocked place), for `look around site`.
    pub site: Option<Vec2>,
    /// The last refused plan's place, drawn in red on the next picture.
    pub highlight: Option<(Vec2, String)>,
}

/// What the planner side remembers (a part of [`RunState`]).
#[derive(Debug, Default)]
pub struct Memory {
    /// The knowledge store.
    pub knowledge: Knowledge,
    /// Notes.
    pub notes: Vec<String>,
    /// The visual memory.
    pub frames: Vec<Frame>,
    /// Recent events for `read events`.
    pub events: Vec<Value>,
    /// The driven path (a point each 0.5 s).
    pub driven: Vec<Vec2>,
}

/// The costs of planning (a part of [`RunState`]).
#[derive(Debug)]
pub struct Costs {
    /// The cost table of the scenario's map and condition.
    pub table: CostTable,
    /// The lane graph.
    pub graph: LaneGraph,
    /// Cost-table rates: lanes (s per m, MJ per m), fields (MJ per m).
    pub rates: ((f64, f64), f64),
}

/// Everything the loop and the tools share.
pub struct RunState<'a> {
    /// The scenario.
    pub sc: &'a Scenario,
    /// The mode.
    pub mode: Mode,
    /// The profile.
    pub profile: Profile,
    /// The world: the tools read it through [`RunState::world`] (sensing only) and
    /// [`RunState::guarded_truth`]; the loop and the run log through [`RunState::port`].
    port: Box<dyn WorldPort>,
    /// What the mission is now: the plan, removed fields, requests, the timer, places of note.
    pub mission: Mission,
    /// What the planner side remembers: knowledge store, pictures, events, notes, the track.
    pub memory: Memory,
    /// The costs: the cost table, the lane graph, the table's rates.
    pub costs: Costs,
    /// `ask_operator` is on.
    pub operator_on: bool,
    /// The run log.
    pub writer: RunWriter,
    /// Counters.
    pub counters: Counters,
    /// Estimated fuel energy used (cost-table rates × driven distance), MJ.
    pub energy_estimate_mj: f64,
    /// The score folded from every row written so far: the end row's score comes from it.
    pub fold: crate::runfolder::score::ScoreFold,
    /// The wake-up in progress.
    pub wake: u64,
    /// Set when the planner read a truth value in the vehicle profile.
    pub truth_read: Option<TruthRead>,
    /// The episode recordings (`None`: not recording, or stopped by a write error).
    pub recorder: Option<Recorder>,
}

impl<'a> RunState<'a> {
    /// A new state.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        sc: &'a Scenario,
        mode: Mode,
        profile: Profile,
        world: Box<dyn WorldPort>,
        table: CostTable,
        writer: RunWriter,
        operator_on: bool,
    ) -> Self {
        let rates = (per_metre(&table, "goto:"), per_metre(&table, "scout:").1);
        let start = world.vehicle().pose.pos();
        RunState {
            sc,
            mode,
            profile,
            port: world,
            mission: Mission::default(),
            memory: Memory { driven: vec![start], ..Memory::default() },
            costs: Costs { table, graph: sc.lane_graph(), rates },
            operator_on,
            writer,
            counters: Counters::default(),
            energy_estimate_mj: 0.0,
            fold: crate::runfolder::score::ScoreFold::new(profile),
            wake: 0,
            truth_read: None,
            recorder: None,
        }
    }

    /// Mission time, s.
    pub fn t(&self) -> f64 {
        self.port.t_s()
    }

    /// What the tools may read of the world: sensing only (truth: [`RunState::guarded_truth`]).
    pub fn world(&self) -> Sensed<'_> {
        Sensed::of(&*self.port)
    }

    /// A tool's request to the skill server.
    pub fn request(&mut self, req: &SkillRequest) -> Reply {
        self.port.request(req)
    }

    /// The whole port: the loop's (stepping, events, the end) and the run log's (the truth in
    /// pose rows and the score; not a planner input). No tool uses it (`harness/tests/rooms.rs`).
    pub fn port(&self) -> &dyn WorldPort {
        &*self.port
    }

    /// The whole port, to step the world and drain its events (the loop's).
    pub fn port_mut(&mut self) -> &mut dyn WorldPort {
        &mut *self.port
    }

    /// Writes a row; a failed write is reported once on stderr (the run goes on; validate will
    /// report the folder).
    pub fn log(&mut self, row: Row) {
        self.fold.row(&row);
        // Said once: after the first failed write (a full disk) the folder is incomplete anyway.
        let failed_before = self.writer.write_failure().is_some();
        if let Err(e) = self.writer.write(&row) {
            if !failed_before {
                eprintln!("acres-harness: cannot write {}: {e}", self.writer.path().display());
            }
        }
        if let Some(r) = self.recorder.as_mut() {
            let result = r.on_row(row);
            self.recording_result(result);
        }
    }

    /// Records the world after a control step (`swept`: the LiDAR made a sweep).
    pub fn record_step(&mut self, swept: bool) {
        if let Some(r) = self.recorder.as_mut() {
            let result = r.on_step(&*self.port, self.energy_estimate_mj, swept);
            self.recording_result(result);
        }
    }

    /// Records an event of the skill server.
    pub fn record_event(&mut self, e: &acres_vehicle::SkillEvent) {
        if let Some(r) = self.recorder.as_mut() {
            let result = r.on_event(e);
            self.recording_result(result);
        }
    }

    /// Finishes the recordings (summaries, final names); a failure is reported on stderr.
    pub fn finish_recording(&mut self) {
        if let Some(r) = self.recorder.take() {
            let result = r.finish();
            self.recording_result(result);
        }
    }

    /// A failed recording write stops the recording (reported once on stderr; the run goes on
    /// and validate reports the missing file).
    fn recording_result(&mut self, result: Result<(), BagError>) {
        if let Err(e) = result {
            eprintln!("acres-harness: the episode recording stops: {e}");
            self.recorder = None;
        }
    }

    /// The truth, through the guard: in the vehicle profile this records a [`TruthRead`] (the
    /// loop then stops the run) and gives nothing.
    pub fn guarded_truth(&mut self, what: &str) -> Result<Truth, TruthRead> {
        if self.profile == Profile::Vehicle {
            let e = TruthRead { what: what.into() };
            self.truth_read = Some(e.clone());
            return Err(e);
        }
        self.port.truth().ok_or_else(|| TruthRead { what: format!("{what} (this world has no truth)") })
    }

    /// Adds the energy estimate of a step of `d_m` metres at `p`.
    pub fn add_energy_estimate(&mut self, p: Vec2, d_m: f64) {
        let rate =
            if self.sc.map_data.field_at(p).is_some() { self.costs.rates.1 } else { self.costs.rates.0 .1 };
        self.energy_estimate_mj += rate * d_m;
    }

    /// Where the vehicle is for planning: `H`, a field (at its entry), or `None` (elsewhere).
    pub fn planning_place(&self) -> Option<String> {
        let p = self.port.vehicle().pose.pos();
        let map = &self.sc.map_data;
        if p.dist(map.home()) <= map.home_radius_m {
            return Some(HOME.into());
        }
        map.fields.values().find(|f| f.entry_pos.dist(p) <= 15.0).map(|f| f.id.clone())
    }

    /// The planned legs of visiting `visits` from here (then home when `return_home`).
    pub fn estimate(&self, visits: &[String], return_home: bool) -> Result<Vec<LegEstimate>, String> {
        let map = &self.sc.map_data;
        let mut out = Vec::new();
        let from = self.planning_place();
        let here = self.port.vehicle().pose.pos();
        let mut legs: Vec<Leg> = Vec::new();
        let mut first_from_here: Option<String> = None;
        let mut at = from.clone();
        for v in visits {
            match &at {
                Some(a) if a == v => {}
                Some(a) => legs.push(Leg::goto(a, v)),
                None => first_from_here = Some(v.clone()),
            }
            legs.push(Leg::scout(v));
            at = Some(v.clone());
        }
        if return_home {
            match &at {
                Some(a) if a == HOME => {}
                Some(a) => legs.push(Leg::ret(a)),
                None => first_from_here = Some(HOME.into()),
            }
        }
        if let Some(target) = first_from_here {
            let node = if target == HOME { HOME.to_string() } else { map.fields[&target].entry.clone() };
            let path = self.costs.graph.route_from_point(here, &node).ok_or("no route from here")?;
            let (t_per_m, e_per_m) = self.costs.rates.0;
            out.push(LegEstimate {
                leg: Leg::goto(HERE, &target),
                planned_time_s: path.length_m() * t_per_m * PLANNED_TIME_FACTOR,
                planned_energy_mj: path.length_m() * e_per_m * PLANNED_ENERGY_FACTOR,
                path: path.points,
            });
        }
        for leg in legs {
            let c = self.costs.table.leg(&leg).map_err(|e| e.to_string())?;
            let path = leg_path(map, &self.costs.graph, &leg).map(|p| p.points).unwrap_or_default();
            out.push(LegEstimate {
                leg,
                planned_time_s: c.time_s * PLANNED_TIME_FACTOR,
                planned_energy_mj: c.energy_mj * PLANNED_ENERGY_FACTOR,
                path,
            });
        }
        Ok(out)
    }

    /// A picture of the run's state: renders, writes `frames/<id>.png` and its row, and keeps it
    /// in the visual memory. A [`View::Map`] gets an inset: `focus`, or else one around the
    /// vehicle.
    pub fn picture(
        &mut self,
        view: View,
        region: Option<Value>,
        focus: Option<Inset>,
    ) -> Result<Frame, String> {
        let id = format!("f{:04}", self.memory.frames.len() + 1);
        let map = self.sc.map_data.clone();
        let mut scene = Scene::new(&map, view.clone());
        scene.frame_id = id.clone();
        scene.t_s = self.t();
        scene.fields_in_play = self.sc.fields.clone();
        scene.scouted = self.port.status().scouted;
        scene.route = self.port.route_ahead();
        scene.plan = self
            .mission
            .plan
            .as_ref()
            .map(|p| p.legs.iter().map(|l| l.1.clone()).collect())
            .unwrap_or_default();
        scene.driven = self.memory.driven.clone();
        scene.vehicle = self.port.vehicle().pose;
        scene.site = self.mission.site;
        scene.blocked = self.memory.knowledge.objects().into_iter().map(cell_center).collect();
        scene.highlight = self.mission.highlight.take();
        scene.inset = Some(focus.unwrap_or_else(|| Inset {
            centre: scene.vehicle.pos(),
            span_m: VEHICLE_INSET_M,
            m_per_px: picture::INSET_M_PER_PX,
            title: "inset: vehicle".into(),
        }));
        match self.profile {
            Profile::Vehicle => {
                if let Some(s) = self.port.scan() {
                    scene.returns = scan_points(s, self.port.sensor_pose());
                }
            }
            Profile::Simulator => {
                if let Ok(t) = self.guarded_truth("the sensed objects") {
                    scene.objects = t
                        .objects
                        .iter()
                        .map(|(id, kind, pose)| {
                            let o = acres_core::objects::Object { id: *id, kind: *kind, pose: *pose };
                            (*kind, o.body().obb)
                        })
                        .collect();
                }
            }
        }
        picture::view_box(&scene).map_err(|e| e.to_string())?;
        let pic = picture::render(&scene);
        let row_view = match view {
            View::Map => RowView::Map,
            View::Zoom(_) => RowView::Zoom,
        };
        let geom = Geometry { view_box: pic.view_box, m_per_px: pic.m_per_px, inset: pic.inset };
        self.store_frame(id, pic.png, row_view, region, geom)
    }

    /// Writes a frame's file and row and keeps it in the visual memory.
    pub fn store_frame(
        &mut self,
        id: String,
        png: Vec<u8>,
        view: RowView,
        region: Option<Value>,
        geom: Geometry,
    ) -> Result<Frame, String> {
        let file = self.writer.write_frame(&id, &png).map_err(|e| format!("cannot write the frame: {e}"))?;
        let frame =
            Frame { id: id.clone(), t_s: self.t(), png: Arc::new(png), view, region: region.clone(), geom };
        self.log(Row::Frame(FrameRow {
            t: self.t(),
            wall: crate::clock::wall_now(),
            id,
            file,
            view,
            region,
            view_box: geom.view_box,
            m_per_px: geom.m_per_px,
        }));
        self.memory.frames.push(frame.clone());
        Ok(frame)
    }

    /// Keeps an event for `read events` (the last 40).
    pub fn remember_event(&mut self, e: Value) {
        self.memory.events.push(e);
        if self.memory.events.len() > 40 {
            self.memory.events.remove(0);
        }
    }

    /// The pose now.
    pub fn pose(&self) -> Pose {
        self.port.vehicle().pose
    }

    /// A short JSON of the running skill and the shield.
    pub fn skill_json(&self) -> Value {
        let st = self.port.status();
        json!({
            "skill": st.skill.map(|s| s.as_str()),
            "id": st.id,
            "state": st.state,
            "progress": round(st.progress, 3),
            "target": st.target,
            "remaining_m": st.remaining_m.map(|r| round(r, 1)),
        })
    }
}

/// The average time (s per m) and energy (MJ per m) of the table's legs whose key starts with
/// `prefix` (`goto:` for lanes, `scout:` for fields).
fn per_metre(table: &CostTable, prefix: &str) -> (f64, f64) {
    let (t, e, l) = table
        .legs
        .iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .fold((0.0, 0.0, 0.0), |(t, e, l), (_, c)| (t + c.time_s, e + c.energy_mj, l + c.length_m));
    if l > 0.0 {
        (t / l, e / l)
    } else {
        (0.2, 0.01)
    }
}

/// Rounds to `d` decimals (for readable results).
pub fn round(v: f64, d: i32) -> f64 {
    let k = 10f64.powi(d);
    (v * k).round() / k
}
