//! `acres-harness sweep SPEC.toml --out DIR`: runs every run of a sweep spec (or of one shard)
//! that is not finished yet, `--list`s them, or `--emit`s the Slurm array script or the
//! Kubernetes Indexed Job of the spec (`harness/src/sweep` has the rules, `docs/sweeps.md` the
//! guide).
//!
//! ```text
//! acres-harness sweep sweep.toml --out sweeps/a --workers 2
//! acres-harness sweep sweep.toml --out sweeps/a --shard 2/3 --list
//! acres-harness sweep sweep.toml --out /scratch/sweeps/a --emit slurm --shards 3 --throttle 2 > submit.sh
//! ```
//!
//! Exit 0 when every run of the shard is finished (whatever its outcome: a run that fails its
//! checks is a result), 1 when a run could not be made, 2 for a bad spec or command line.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use clap::{Args, ValueEnum};

use super::run::{load_tables, model_dir};
use super::{maps_dir, Failure};
use crate::runfolder::recording::Record;
use crate::runfolder::rows::Mode;
use crate::sweep::emit::{self, EmitOptions};
use crate::sweep::exec::{self, Finished, Runner};
use crate::sweep::{Shard, Spec, NO_MODEL};

/// The scheduler files `--emit` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// A bash script submitting a Slurm job array and its merge job.
    Slurm,
    /// A Kubernetes Indexed Job and its merge Job.
    K8s,
}

/// Options of `sweep`.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// The sweep spec (TOML).
    pub spec: PathBuf,
    /// The output folder (every shard of a sweep writes to the same one, or to its own).
    #[arg(long)]
    pub out: PathBuf,
    /// This shard, I/N (1-based). Without it: SLURM_ARRAY_TASK_ID (with SLURM_ARRAY_TASK_MIN
    /// and SLURM_ARRAY_TASK_COUNT), else JOB_COMPLETION_INDEX (0-based, with --shards), else all.
    #[arg(long, value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// The number of shards (with JOB_COMPLETION_INDEX, and for --emit).
    #[arg(long)]
    pub shards: Option<u64>,
    /// Print this shard's run ids and whether each is done, without running.
    #[arg(long)]
    pub list: bool,
    /// Runs at once (threads sharing one client per model); default: the spec's.
    #[arg(long)]
    pub workers: Option<usize>,
    /// What each run records (default: the spec's).
    #[arg(long, value_parser = parse_record)]
    pub record: Option<Record>,
    /// Print the scheduler files of the spec instead of running.
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// --emit: shards running at once (Slurm %N, the Job's parallelism); default: all.
    #[arg(long)]
    pub throttle: Option<u64>,
    /// --emit slurm: the harness program on the nodes (default: this one; ACRES_HARNESS wins
    /// when the script runs).
    #[arg(long)]
    pub harness: Option<String>,
    /// --emit k8s: the container image with acres-harness on its PATH.
    #[arg(long, default_value = "acres-harness:latest")]
    pub image: String,
    /// --emit k8s: the PersistentVolumeClaim of the shared volume.
    #[arg(long, default_value = "acres-sweep")]
    pub claim: String,
    /// --emit k8s: where the shared volume is mounted.
    #[arg(long, default_value = "/sweep")]
    pub mount: String,
    /// --emit: the job name.
    #[arg(long, default_value = "acres-sweep")]
    pub name: String,
    /// No line per run (errors only).
    #[arg(long)]
    pub quiet: bool,
    /// The model-call cache (as `run --cache`): replies stored in DIR and replayed with their
    /// latency when the same request comes again; shards may share it.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
}

/// Parses `all`, `interface` or `none`.
pub fn parse_record(s: &str) -> Result<Record, String> {
    serde_json::from_value(serde_json::json!(s))
        .map_err(|_| format!("unknown recording \"{s}\"; expected all, interface or none"))
}

/// Runs the command.
pub fn run(a: SweepArgs) -> Result<(), Failure> {
    let mut spec = Spec::load(&a.spec).map_err(|e| Failure::input(e.to_string()))?;
    if let Some(r) = a.record {
        spec.record = r;
    }
    if let Some(w) = a.workers {
        if w == 0 {
            return Err(Failure::input("--workers must be at least 1"));
        }
        spec.workers = w;
    }
    if let Some(e) = a.emit {
        return emit(&a, &spec, e);
    }
    let shard = match a.shard {
        Some(s) => s,
        None => Shard::from_env(|k| std::env::var(k).ok(), a.shards)
            .map_err(Failure::input)?
            .unwrap_or(Shard::ALL),
    };
    let maps = spec.maps.clone().unwrap_or_else(|| maps_dir(&spec.scenarios));
    let scenarios = spec.with_sensing(
        crate::scenario::load_all(&spec.scenarios, &maps).map_err(|e| Failure::input(e.to_string()))?,
    );
    if scenarios.is_empty() {
        return Err(Failure::input(format!(
            "{}: at scenarios: no scenario in the files or folders",
            a.spec.display()
        )));
    }
    let runs = exec::plan(&spec, &scenarios);
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Failure::env(format!("{}: cannot create: {e}", a.out.display())))?;
    exec::write_plan(&a.out, &spec, &runs)
        .map_err(|e| Failure::env(format!("{}: cannot write the plan: {e}", a.out.display())))?;
    let (todo, total) = exec::todo(&a.out, &runs, shard);
    if a.list {
        let todo_ids: std::collections::BTreeSet<String> = todo.iter().map(|r| r.id.to_string()).collect();
        for r in runs.iter().filter(|r| shard.takes(&r.id)) {
            let id = r.id.to_string();
            println!("{id}  {}", if todo_ids.contains(&id) { "todo" } else { "done" });
        }
        eprintln!("shard {shard}: {total} runs, {} to do", todo.len());
        return Ok(());
    }
    let gates = Gates::default();
    let cache = super::run::open_cache(a.cache.as_deref())?;
    let models = models(&spec, &gates, cache)?;
    let tables = load_tables(&scenarios)?;
    let workers = workers(&spec, &models);
    let runner = Runner { spec: &spec, scenarios: &scenarios, tables: &tables, models, out: a.out.clone() };
    let progress = Progress::new(total, total - todo.len(), a.quiet);
    let finished = runner.run_all(&todo, workers, &|f| progress.finished(f));
    progress.end();
    let errors: Vec<&Finished> = finished.iter().filter(|f| f.end.starts_with("error")).collect();
    for f in &errors {
        eprintln!("acres-harness: {}: {}", f.id, f.end);
    }
    if !a.quiet {
        let ok = finished.iter().filter(|f| f.success).count();
        println!(
            "shard {shard}: {total} runs, {} done before, {} made now ({ok} succeeded)",
            total - todo.len(),
            finished.len()
        );
    }
    if !errors.is_empty() {
        return Err(Failure::check(format!("{} of {} runs could not be made", errors.len(), finished.len())));
    }
    Ok(())
}

/// The call gates of the models (lock files in the temp folder), removed at the end.
#[derive(Default)]
struct Gates(Mutex<Vec<PathBuf>>);

impl Drop for Gates {
    fn drop(&mut self) {
        for p in self.0.lock().map(|v| v.clone()).unwrap_or_default() {
            let _ = std::fs::remove_file(p);
        }
    }
}

type Models = BTreeMap<String, (crate::planners::models::config::Resolved, Box<dyn crate::planners::Client>)>;

/// Resolves the models of the spec's non-classical modes, checks their keys and makes one client
/// each (with a gate file when the model has `calls_per_minute`).
fn models(
    spec: &Spec,
    gates: &Gates,
    cache: Option<crate::planners::models::cache::CallCache>,
) -> Result<Models, Failure> {
    let mut out = Models::new();
    if spec.modes.iter().all(|m| *m == Mode::Classical) {
        return Ok(out);
    }
    for (i, name) in spec.models.iter().enumerate() {
        let at = |e: String| Failure::input(format!("{}: at models[{i}]: {e}", spec.file.display()));
        let r = crate::planners::models::resolve(name, &model_dir()).map_err(|e| at(e.to_string()))?;
        r.config.api_key().map_err(|e| at(format!("{}: {e}", r.file.display())))?;
        let gate_file = match r.config.limits.calls_per_minute {
            None => None,
            Some(_) => {
                let p = std::env::temp_dir().join(format!(
                    "acres-gate-{}-{:016x}",
                    std::process::id(),
                    crate::sweep::stable_hash(&r.config.service())
                ));
                std::fs::write(&p, "")
                    .map_err(|e| at(format!("{}: cannot make the call gate: {e}", p.display())))?;
                gates.0.lock().expect("gates lock").push(p.clone());
                Some(p)
            }
        };
        let o = crate::planners::models::ClientOptions {
            think_s: spec.options.think_s,
            gate_file,
            cache: cache.clone(),
        };
        let client = crate::planners::models::client(&r, &o).map_err(at)?;
        let key = exec::model_name(name);
        if key == NO_MODEL {
            return Err(at(format!("the model name \"{NO_MODEL}\" is the classical runs'")));
        }
        out.insert(key, (r, client));
    }
    Ok(out)
}

/// The spec's workers, at most the smallest `parallel_runs` of the models used.
fn workers(spec: &Spec, models: &Models) -> usize {
    models.values().filter_map(|(r, _)| r.config.limits.parallel_runs).fold(spec.workers, usize::min).max(1)
}

fn emit(a: &SweepArgs, spec: &Spec, e: Emit) -> Result<(), Failure> {
    let shards = a.shards.ok_or_else(|| Failure::input("--emit needs --shards N"))?;
    if shards == 0 {
        return Err(Failure::input("--shards must be at least 1"));
    }
    let abs = |p: &std::path::Path| {
        std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()).display().to_string()
    };
    let harness = match &a.harness {
        Some(h) => h.clone(),
        None => std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "acres-harness".into()),
    };
    let o = EmitOptions {
        spec: abs(&a.spec),
        out: abs(&a.out),
        shards,
        throttle: a.throttle.unwrap_or(shards).clamp(1, shards),
        workers: spec.workers,
        harness,
        image: a.image.clone(),
        claim: a.claim.clone(),
        mount: a.mount.clone(),
        name: a.name.clone(),
    };
    match e {
        Emit::Slurm => print!("{}", emit::slurm(&o)),
        Emit::K8s => print!("{}", emit::k8s(&o)),
    }
    Ok(())
}

/// A bar on a TTY (done/total, successes, cost so far, ETA), else a line per run.
struct Progress {
    total: usize,
    start: Instant,
    before: usize,
    state: Mutex<(usize, usize, f64)>,
    tty: bool,
    quiet: bool,
}

impl Progress {
    fn new(total: usize, before: usize, quiet: bool) -> Self {
        Progress {
            total,
            before,
            start: Instant::now(),
            state: Mutex::new((before, 0, 0.0)),
            tty: !quiet && std::io::stderr().is_terminal(),
            quiet,
        }
    }

    fn finished(&self, f: &Finished) {
        let mut s = self.state.lock().expect("progress lock");
        s.0 += 1;
        s.1 += usize::from(f.success);
        s.2 += f.usd;
        let (done, ok, usd) = *s;
        if self.tty {
            let made = done - self.before;
            let left = self.total - done;
            let eta_s = self.start.elapsed().as_secs_f64() / made.max(1) as f64 * left as f64;
            let width = 30;
            let filled = done * width / self.total.max(1);
            eprint!(
                "\r\x1b[K[{}{}] {done}/{} runs, {ok} succeeded, ${usd:.4}, ETA {:.0} s",
                "#".repeat(filled),
                ".".repeat(width - filled),
                self.total,
                eta_s
            );
        } else if !self.quiet {
            println!(
                "[{done}/{}] {}  {}  {}  ${:.4}",
                self.total,
                f.id,
                if f.success { "ok" } else { "FAILED" },
                f.end,
                f.usd
            );
        }
    }

    fn end(&self) {
        if self.tty {
            eprintln!();
        }
    }
}
