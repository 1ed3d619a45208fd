//! Running a sweep: the plan (every run of the spec, in a fixed order), what is done already,
//! and the workers that make the rest.
//!
//! A run is made in `<out>/<id>.partial/` and renamed to `<out>/<id>/` once it has ended: the
//! rename is the commit, so a folder at an id's place is a finished run (a sweep killed by
//! SIGKILL leaves at most `workers` `.partial` folders, removed and redone by the next one). A
//! folder at an id's place that does not validate with an end row is redone too.
//!
//! The workers are threads of this process sharing one client per model, so a model's
//! `calls_per_minute` gate (a lock file in the temp folder, see `planners::models::gate`)
//! holds across every worker of the shard. Shards on other machines have gates of their own:
//! N machines may send up to N × calls_per_minute together (`docs/sweeps.md`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::{RunId, Shard, Spec, NO_MODEL, PARTIAL_SUFFIX, PLAN_FILE};
use crate::planners::models::config::Resolved;
use crate::planners::planning::costs::CostTable;
use crate::planners::Client;
use crate::run::{run_scenario, Planner, RunOptions};
use crate::runfolder::rows::{Mode, PlannerInfo};
use crate::runfolder::validate::{find_run_folders, validate_folder, Status};
use crate::scenario::Scenario;

/// One run of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRun {
    /// Its id.
    pub id: RunId,
    /// The index of its scenario in the loaded scenarios.
    pub scenario: usize,
    /// The world's seed of its repeat.
    pub seed: u64,
}

/// Every run of a spec: models × modes × profiles × scenarios × repeats, in that nesting; the
/// classical mode runs once with the model [`NO_MODEL`] whatever the models.
pub fn plan(spec: &Spec, scenarios: &[Scenario]) -> Vec<PlannedRun> {
    let mut runs = Vec::new();
    let mut classical_done = false;
    for model in &spec.models {
        for &mode in &spec.modes {
            if mode == Mode::Classical && classical_done {
                continue;
            }
            let name = if mode == Mode::Classical { NO_MODEL.to_string() } else { model_name(model) };
            for &profile in &spec.profiles {
                for (i, sc) in scenarios.iter().enumerate() {
                    for (r, seed) in spec.seeds.iter().enumerate() {
                        let id = RunId {
                            model: name.clone(),
                            mode,
                            profile,
                            scenario: sc.id.clone(),
                            rep: r as u32 + 1,
                        };
                        runs.push(PlannedRun { id, scenario: i, seed: *seed });
                    }
                }
            }
        }
        classical_done |= spec.modes.contains(&Mode::Classical);
    }
    runs
}

/// The name a model goes by in ids and run folders: the file stem of a path, else the name.
pub fn model_name(model: &str) -> String {
    Path::new(model).file_stem().map_or_else(|| model.to_string(), |s| s.to_string_lossy().into_owned())
}

/// The folder of a run: `<out>/<id>`.
pub fn run_dir(out: &Path, id: &RunId) -> PathBuf {
    out.join(id.to_string())
}

/// Whether the run of `id` is finished: its folder holds one run folder that validates with
/// an end row.
pub fn is_finished(out: &Path, id: &RunId) -> bool {
    let dir = run_dir(out, id);
    let folders = find_run_folders(&dir);
    folders.len() == 1 && validate_folder(&folders[0]).status == Status::Ok
}

/// The plan file's content: the spec file's name and every id of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// The spec file's name (no folder).
    pub spec: String,
    /// Every run id of the sweep (all shards), in plan order.
    pub runs: Vec<String>,
}

/// Writes `<out>/sweep.plan.json` atomically (a temporary file renamed into place; every shard
/// writes the same bytes).
pub fn write_plan(out: &Path, spec: &Spec, runs: &[PlannedRun]) -> std::io::Result<()> {
    let p = PlanFile {
        spec: spec.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        runs: runs.iter().map(|r| r.id.to_string()).collect(),
    };
    let text = serde_json::to_string_pretty(&p).map_err(std::io::Error::other)? + "\n";
    write_atomic(&out.join(PLAN_FILE), text.as_bytes())
}

/// Writes a file through a temporary one beside it and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}-{:?}", std::process::id(), std::thread::current().id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// What a sweep runs with: the loaded scenarios, their cost tables and one client per model.
pub struct Runner<'a> {
    /// The spec.
    pub spec: &'a Spec,
    /// The scenarios, in load order.
    pub scenarios: &'a [Scenario],
    /// The cost tables by (map, condition).
    pub tables: &'a BTreeMap<(String, String), CostTable>,
    /// The model of each name used by the plan (not for classical runs).
    pub models: BTreeMap<String, (Resolved, Box<dyn Client>)>,
    /// The output folder.
    pub out: PathBuf,
}

/// A run a worker finished (or failed to make).
#[derive(Debug, Clone)]
pub struct Finished {
    /// The id.
    pub id: RunId,
    /// The end code, or the error that stopped the run.
    pub end: String,
    /// All checks held.
    pub success: bool,
    /// The run's estimated cost, USD.
    pub usd: f64,
}

impl Runner<'_> {
    /// The options of one run, made in `out`.
    fn options(&self, run: &PlannedRun, out: PathBuf) -> RunOptions {
        let o = &self.spec.options;
        let l = &self.spec.limits;
        let model = self.models.get(&run.id.model).map(|(r, _)| r);
        let mc = model.map(|r| &r.config);
        RunOptions {
            mode: run.id.mode,
            profile: run.id.profile,
            pace: o.pace,
            operator: o.operator,
            out,
            seed: run.seed,
            recovery_mode: o.recovery_mode.map(|m| m.mode()),
            recovery_options: o.recovery_options.iter().map(|(k, v)| (k.clone(), v.to_string())).collect(),
            model: run.id.model.clone(),
            model_file: model.map(|r| r.file.display().to_string()),
            call_s: l.call_s.or(mc.and_then(|c| c.call_timeout_s)),
            wake_s: l.wake_s.or(mc.and_then(|c| c.wake_timeout_s)),
            calls_per_run: l.calls_per_run.or(mc.and_then(|c| c.limits.calls_per_run)),
            secret_vars: mc.map(|c| c.api_key_env.iter().cloned().collect()).unwrap_or_default(),
            record: self.spec.record,
            link: None,
            planner: Some(PlannerInfo::of(
                run.id.mode,
                &run.id.model,
                mc.map_or("scripted", |c| c.provider.as_str()),
                o.think_s,
            )),
            // A sweep does not probe (`run --probe`, `models --config NAME --probe` before it).
            probe: None,
        }
    }

    /// Makes one run: in `<id>.partial`, then renamed to `<id>`.
    pub fn make(&self, run: &PlannedRun) -> Finished {
        let fail =
            |e: String| Finished { id: run.id.clone(), end: format!("error: {e}"), success: false, usd: 0.0 };
        let dir = run_dir(&self.out, &run.id);
        let mut partial = dir.as_os_str().to_owned();
        partial.push(PARTIAL_SUFFIX);
        let partial = PathBuf::from(partial);
        for d in [&partial, &dir] {
            if d.exists() {
                if let Err(e) = std::fs::remove_dir_all(d) {
                    return fail(format!("{}: cannot remove: {e}", d.display()));
                }
            }
        }
        let sc = &self.scenarios[run.scenario];
        let table = self.tables[&(sc.map_data.name.clone(), sc.condition.as_str().to_string())].clone();
        let planner = match self.models.get(&run.id.model) {
            Some((_, c)) if run.id.mode != Mode::Classical => Planner::Model(c.as_ref()),
            _ => Planner::Classical,
        };
        let outcome = match run_scenario(sc, &self.options(run, partial.clone()), planner, table) {
            Ok(o) => o,
            Err(e) => return fail(format!("{e:#}")),
        };
        if let Err(e) = std::fs::rename(&partial, &dir) {
            return fail(format!("{} -> {}: {e}", partial.display(), dir.display()));
        }
        let usd = crate::runfolder::load_scores(&dir).first().map_or(0.0, |l| l.score.usd);
        Finished { id: run.id.clone(), end: outcome.end.to_string(), success: outcome.success, usd }
    }

    /// Makes `todo` with `workers` threads; `done` hears of each run as it finishes. Returns the
    /// finished runs in `todo`'s order.
    pub fn run_all(
        &self,
        todo: &[&PlannedRun],
        workers: usize,
        done: &(dyn Fn(&Finished) + Sync),
    ) -> Vec<Finished> {
        let next = Mutex::new(0usize);
        let results: Mutex<Vec<(usize, Finished)>> = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..workers.clamp(1, todo.len().max(1)) {
                s.spawn(|| loop {
                    let i = {
                        let mut n = next.lock().expect("queue lock");
                        *n += 1;
                        *n - 1
                    };
                    let Some(run) = todo.get(i) else { break };
                    let f = self.make(run);
                    done(&f);
                    results.lock().expect("results lock").push((i, f));
                });
            }
        });
        let mut r = results.into_inner().unwrap_or_default();
        r.sort_by_key(|(i, _)| *i);
        r.into_iter().map(|(_, f)| f).collect()
    }
}

/// The runs of `shard` that are not finished yet (partial or bad folders included).
pub fn todo<'p>(out: &Path, runs: &'p [PlannedRun], shard: Shard) -> (Vec<&'p PlannedRun>, usize) {
    let mine: Vec<&PlannedRun> = runs.iter().filter(|r| shard.takes(&r.id)).collect();
    let total = mine.len();
    (mine.into_iter().filter(|r| !is_finished(out, &r.id)).collect(), total)
}
