//! A run loaded for showing: its rows, timeline, map and World data, and the place and picture
//! of each plan verdict. The viewer's routes and the video both start from [`load`].

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use acres_farm::geom::{Polyline, Vec2};
use acres_farm::route::leg_path;
use acres_farm::{LaneGraph, Leg, Map};

use super::episode::{episode_file, Cache};
use super::model::{RunLog, Timeline, Verdict};
use super::source::{plan_lines, pose_at, EpisodeSource, RunLogSource, WorldData, WorldSource};
use crate::review::video::WorldChoice;

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

/// The message of `--world bag` for a run folder without an episode recording.
pub fn no_recording(folder: &Path) -> String {
    format!(
        "--world bag: {} has no episode.mcap (nor episode.mcap.part): a link run or a run with recording off; use --world auto or none",
        folder.display()
    )
}

/// Reads a run folder and builds its timeline and world: with `auto`, the objects and LiDAR
/// returns of its episode recording when it has one (read through `cache`); with `bag`, they
/// must be there (else the error says so); with `none`, the run log alone.
pub fn load(folder: &Path, maps: &Path, world: WorldChoice, cache: &Cache) -> Result<Loaded, String> {
    let log = RunLog::read(folder).map_err(|e| e.to_string())?;
    let timeline = Timeline::of(&log);
    let map = log.scenario(maps).map_err(|e| e.to_string())?.map_data;
    let base = RunLogSource { log: &log, timeline: &timeline, map: map.clone() };
    let file = match world {
        WorldChoice::None | WorldChoice::Game => None,
        WorldChoice::Auto => episode_file(folder),
        WorldChoice::Bag => Some(episode_file(folder).ok_or_else(|| no_recording(folder))?),
    };
    let world = match file.map(|f| cache.get(&f)) {
        None => base.world(),
        Some(Ok(episode)) => EpisodeSource { log: base, episode: &episode }.world(),
        Some(Err(e)) if world == WorldChoice::Bag => return Err(format!("--world bag: {e}")),
        Some(Err(e)) => {
            let mut w = base.world();
            w.missing = vec![format!("objects and LiDAR returns (the episode recording: {e})")];
            w
        }
    };
    Ok(Loaded { log, timeline, map, world })
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

/// The picture of a verdict, encoded.
pub fn verdict_picture(l: &Loaded, vd: &Verdict) -> crate::tools::picture::Picture {
    verdict_raster(l, vd).encode()
}

/// The picture of a verdict: its plan (orange) on the whole map, the vehicle where it was, and
/// for a refusal its place as a red ring with the reason.
pub fn verdict_raster(l: &Loaded, vd: &Verdict) -> crate::tools::picture::Raster {
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
    crate::tools::picture::draw(&s)
}
