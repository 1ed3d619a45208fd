//! The answers of the viewer's routes: the index of runs, one run's data, a verdict's picture
//! and the files of the served folder.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use acres_runtime::geom::{Polyline, Vec2};
use acres_runtime::route::leg_path;
use acres_runtime::{LaneGraph, Leg, Map};

use super::http::{safe_path, Request, Response};
use super::model::{RunLog, Timeline, Verdict};
use super::source::{plan_lines, pose_at, RunLogSource, WorldData, WorldSource};
use super::Viewer;
use crate::runlog::rows::EndRow;
use crate::runlog::{load_scores, ScoreLine, RUN_FILE};

/// The answer of `/api/index`.
#[derive(Debug, Serialize)]
pub struct Index {
    /// The served folder's name.
    pub root: String,
    /// Whether the served folder is one run (addressed as `.`).
    pub single: bool,
    /// Whether the page follows runs in progress.
    pub follow: bool,
    /// Whether the World pane draws the world.
    pub world: bool,
    /// The score line of each run below the folder.
    pub runs: Vec<ScoreLine>,
}

/// The head of a run: what was run and how it ended.
#[derive(Debug, Serialize)]
pub struct Head {
    /// The scenario id.
    pub scenario: String,
    /// Its title.
    pub title: String,
    /// The instruction.
    pub instruction: String,
    /// The mode.
    pub mode: String,
    /// The profile.
    pub profile: String,
    /// The world.
    pub world: String,
    /// The model configuration.
    pub model: String,
    /// The deadline, s.
    pub deadline_s: Option<f64>,
    /// The fuel limit, MJ.
    pub fuel_limit_mj: Option<f64>,
    /// The end row (`None` while the run goes on).
    pub end: Option<EndRow>,
    /// The score line (partial while the run goes on).
    pub score: Option<ScoreLine>,
}

/// The answer of `/api/run`.
#[derive(Debug, Serialize)]
pub struct RunView {
    /// The head.
    pub head: Head,
    /// The timeline.
    pub timeline: Timeline,
    /// The World pane's data.
    pub world: WorldData,
    /// The place of each verdict (a refusal's place shown in red), by verdict index.
    pub verdict_places: Vec<Option<[f64; 2]>>,
}

/// `/api/index`.
pub fn index(v: &Viewer) -> Response {
    let single = v.root.join(RUN_FILE).is_file();
    let mut runs = load_scores(&v.root);
    if single {
        runs.iter_mut().for_each(|r| r.folder = ".".into());
    }
    let root = v.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Response::json(&Index { root, single, follow: v.follow, world: v.world, runs })
}

/// The run folder named by the `run` query key.
fn run_folder(v: &Viewer, req: &Request) -> Result<PathBuf, Response> {
    let rel = req.get("run").unwrap_or(".");
    let folder = safe_path(&v.root, rel).map_err(|r| r.response())?;
    if !folder.join(RUN_FILE).is_file() {
        return Err(Response::error(404, format!("not found: \"{rel}\" is not a run folder (no run.jsonl)")));
    }
    Ok(folder)
}

/// Everything about one run, as the page and the video use it.
pub struct Loaded {
    /// The rows.
    pub log: RunLog,
    /// Their grouping.
    pub timeline: Timeline,
    /// The map of the scenario.
    pub map: std::sync::Arc<Map>,
    /// The World pane's data.
    pub world: WorldData,
}

/// Reads a run folder and builds its timeline and world.
pub fn load(folder: &Path, maps: &Path) -> Result<Loaded, String> {
    let log = RunLog::read(folder).map_err(|e| e.to_string())?;
    let timeline = Timeline::of(&log);
    let map = log.scenario(maps).map_err(|e| e.to_string())?.map_data;
    let world = RunLogSource { log: &log, timeline: &timeline, map: map.clone() }.world();
    Ok(Loaded { log, timeline, map, world })
}

/// `/api/run`.
pub fn run(v: &Viewer, req: &Request) -> Response {
    let folder = match run_folder(v, req) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let l = match load(&folder, &v.maps) {
        Ok(l) => l,
        Err(e) => return Response::error(500, e),
    };
    let r = &l.log.run;
    let head = Head {
        scenario: r.scenario.clone(),
        title: r.title.clone(),
        instruction: r.instruction.clone(),
        mode: r.mode.as_str().into(),
        profile: r.profile.as_str().into(),
        world: r.world.as_str().into(),
        model: r.model.clone(),
        deadline_s: r.deadline_s,
        fuel_limit_mj: r.fuel_limit_mj,
        end: l.log.end.clone(),
        score: load_scores(&folder).into_iter().next(),
    };
    let verdict_places =
        l.timeline.verdicts.iter().map(|vd| verdict_place(&l, vd).map(|p| [p.x, p.y])).collect();
    Response::json(&RunView { head, timeline: l.timeline, world: l.world, verdict_places })
}

/// The parts of a `plan` tool result that place a refusal.
#[derive(Debug, Default, Deserialize)]
struct PlanResult {
    /// The field a refusal is about.
    #[serde(default)]
    field: Option<String>,
    /// The legs with their costs.
    #[serde(default)]
    legs: Vec<LegCost>,
}

/// One leg's planned cost.
#[derive(Debug, Deserialize)]
struct LegCost {
    planned_time_s: f64,
    planned_energy_mj: f64,
}

/// The place of a verdict: the field a refusal names (its entry); for a deadline or fuel refusal,
/// the point along the plan where the planned time or energy passes the limit (for fuel the
/// whole limit is taken, as the rows do not give the energy used so far); else the first visit.
pub fn verdict_place(l: &Loaded, vd: &Verdict) -> Option<Vec2> {
    let map = &*l.map;
    let result: PlanResult = l
        .timeline
        .tools
        .iter()
        .find(|t| t.name == "plan" && (t.t_s - vd.t_s).abs() < 1e-9)
        .and_then(|t| serde_json::from_value(Value::Object(t.result.clone())).ok())
        .unwrap_or_default();
    if let Some(f) = result.field.as_ref().and_then(|f| map.fields.get(f)) {
        return Some(f.entry_pos);
    }
    let budget = match (vd.accepted, vd.reason.as_deref()) {
        (false, Some("deadline")) => l.log.run.deadline_s.map(|d| (d - vd.t_s, true)),
        (false, Some("fuel")) => l.log.run.fuel_limit_mj.map(|f| (f, false)),
        _ => None,
    };
    let first = vd.visits.first().and_then(|f| map.fields.get(f)).map(|f| f.entry_pos);
    let Some((budget, by_time)) = budget else { return first };
    let graph = LaneGraph::new(map);
    let paths: Vec<Polyline> = Leg::mission(&vd.visits, vd.return_home)
        .iter()
        .filter_map(|leg| leg_path(map, &graph, leg))
        .collect();
    let mut used = 0.0;
    for (path, cost) in paths.iter().zip(&result.legs) {
        let c = if by_time { cost.planned_time_s } else { cost.planned_energy_mj };
        if used + c > budget && c > 0.0 {
            let f = ((budget - used) / c).clamp(0.0, 1.0);
            return Some(path.point_at(f * path.length_m()));
        }
        used += c;
    }
    paths.last().and_then(|p| p.points.last().copied()).or(first)
}

/// `/api/verdict.png`: the verdict's plan (orange) on the map, the vehicle where it was, and the
/// verdict's place as a red ring with the reason.
pub fn verdict_png(v: &Viewer, req: &Request) -> Response {
    let folder = match run_folder(v, req) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let Some(i) = req.get("i").and_then(|i| i.parse::<usize>().ok()) else {
        return Response::error(400, "verdict.png needs i=<verdict index>");
    };
    let l = match load(&folder, &v.maps) {
        Ok(l) => l,
        Err(e) => return Response::error(500, e),
    };
    let Some(vd) = l.timeline.verdicts.get(i) else {
        return Response::error(
            404,
            format!("not found: verdict {i} (the run has {})", l.timeline.verdicts.len()),
        );
    };
    Response::ok("image/png", verdict_picture(&l, vd).png)
}

/// The picture of a verdict, encoded.
pub fn verdict_picture(l: &Loaded, vd: &Verdict) -> crate::picture::Picture {
    verdict_raster(l, vd).encode()
}

/// The picture of a verdict: its plan (orange) on the whole map, the vehicle where it was, and
/// for a refusal its place as a red ring with the reason.
pub fn verdict_raster(l: &Loaded, vd: &Verdict) -> crate::picture::Raster {
    let map = &*l.map;
    let mut s = l.world.scene_at(map, &l.timeline, vd.t_s, super::source::WorldView::Drive);
    s.frame_id = format!("verdict {}", vd.i + 1);
    let graph = LaneGraph::new(map);
    s.plan = plan_lines(map, &graph, &vd.visits, vd.return_home)
        .into_iter()
        .map(|l| l.into_iter().map(|p| Vec2::new(p[0], p[1])).collect())
        .collect();
    if let Some(p) = pose_at(&l.world.track, vd.t_s) {
        s.vehicle = p;
    }
    if !vd.accepted {
        let what = vd.reason.clone().unwrap_or_else(|| "refused".into());
        s.highlight = verdict_place(l, vd).map(|p| (p, what));
    }
    crate::picture::draw(&s)
}

/// `/files/REL`: a file of the served folder.
pub fn file(v: &Viewer, rel: &str) -> Response {
    let path = match safe_path(&v.root, rel) {
        Ok(p) => p,
        Err(r) => return r.response(),
    };
    if !path.is_file() {
        return Response::error(404, format!("not found: \"{rel}\" is not a file"));
    }
    let kind = match path.extension().and_then(|e| e.to_str()) {
        Some("png") => "image/png",
        Some("json") => "application/json",
        _ => "text/plain; charset=utf-8",
    };
    match std::fs::read(&path) {
        Ok(b) => Response::ok(kind, b),
        Err(e) => Response::error(404, format!("not found: \"{rel}\": {e}")),
    }
}
