//! The answers of the viewer's routes: the index of runs, one run's data, a verdict's picture
//! and the files of the served folder.

use std::path::PathBuf;

use serde::Serialize;

use super::http::{safe_path, Request, Response};
use super::Viewer;
use crate::review::episode::episode_file;
use crate::review::loaded::{load, no_recording, verdict_picture, verdict_place, Loaded};
use crate::review::model::Timeline;
use crate::review::source::WorldData;
use crate::review::video::WorldChoice;
use crate::runfolder::rows::EndRow;
use crate::runfolder::{load_scores, ScoreLine, RUN_FILE};

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

/// The run of a folder as the viewer's `--world` asks: 409 for `bag` and a run without a
/// recording.
fn load_run(v: &Viewer, folder: &std::path::Path) -> Result<Loaded, Response> {
    if v.world == WorldChoice::Bag && episode_file(folder).is_none() {
        return Err(Response::error(409, no_recording(folder)));
    }
    load(folder, &v.maps, v.world, &v.episodes).map_err(|e| Response::error(500, e))
}

/// `/api/index`.
pub fn index(v: &Viewer) -> Response {
    let single = v.root.join(RUN_FILE).is_file();
    let mut runs = load_scores(&v.root);
    if single {
        runs.iter_mut().for_each(|r| r.folder = ".".into());
    }
    let root = v.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Response::json(&Index { root, single, follow: v.follow, world: v.world != WorldChoice::None, runs })
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

/// `/api/run`.
pub fn run(v: &Viewer, req: &Request) -> Response {
    let folder = match run_folder(v, req) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let l = match load_run(v, &folder) {
        Ok(l) => l,
        Err(r) => return r,
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
    let l = match load_run(v, &folder) {
        Ok(l) => l,
        Err(r) => return r,
    };
    let Some(vd) = l.timeline.verdicts.get(i) else {
        return Response::error(
            404,
            format!("not found: verdict {i} (the run has {})", l.timeline.verdicts.len()),
        );
    };
    Response::ok("image/png", verdict_picture(&l, vd).png)
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
