//! `acres-harness run`: loads and checks every scenario first (a bad one stops everything with
//! exit 2 and no run folder), then runs each, in parallel processes with `--workers` (results do
//! not depend on the count) or in threads of one process with `--concurrent`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

use clap::Args;
use serde_json::json;

use crate::planners::planning::costs::CostTable;

use super::{maps_dir, repo_root, Failure};
use crate::run::{run_scenario, Planner, RunOptions, RunOutcome};
use crate::runfolder::rows::{Mode, PlannerInfo, Profile, World};
use crate::scenario::{self, RecoveryMode, Scenario};

/// Options of `run`. Serialised, they are a worker's command line (`command_line`): each field is
/// its flag, so every field must be an option of `run` under the same name.
#[derive(Debug, Clone, PartialEq, Args, serde::Serialize)]
pub struct RunArgs {
    /// Scenario files or folders (a folder: its top-level *.json files).
    #[arg(long, required = true, num_args = 1..)]
    pub scenario: Vec<PathBuf>,
    /// A model configuration: a name in the model-config folder (`ACRES_MODEL_CONFIGS`, default
    /// `harness/model_configs/`), or a path to a TOML file.
    #[arg(long, default_value = "scripted")]
    pub model: String,
    /// classical, text, visual or checked.
    #[arg(long, default_value = "checked", value_parser = parse_mode)]
    pub mode: Mode,
    /// The folder of the run folders.
    #[arg(long)]
    pub out: PathBuf,
    /// The folder of the maps named by the scenarios (default: `maps/` beside the scenarios, else
    /// `scenarios/maps`).
    #[arg(long)]
    pub maps: Option<PathBuf>,
    /// Scenarios in parallel processes.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Runs of one process that wait for a model together (threads).
    #[arg(long, default_value_t = 1)]
    pub concurrent: usize,
    /// vehicle or simulator.
    #[arg(long, default_value = "vehicle", value_parser = parse_profile)]
    pub profile: Profile,
    /// core (ACRES Core in the process) or link (the bridge node over TCP; the token, if the
    /// bridge wants one, comes from the environment variable ACRES_LINK_TOKEN and is never logged).
    #[arg(long, default_value = "core", value_parser = parse_world)]
    pub world: World,
    /// The bridge's host (world link).
    #[arg(long, default_value = "127.0.0.1")]
    pub link_host: String,
    /// The bridge's port (world link).
    #[arg(long, default_value_t = 5630)]
    pub link_port: u16,
    /// The link is lost when no observation comes for this long, s.
    #[arg(long, default_value_t = 2.0)]
    pub link_silent_s: f64,
    /// The bridge certificate's SHA-256 fingerprint (as the bridge prints it): the link speaks
    /// TLS and trusts only that certificate. May be repeated.
    #[arg(long)]
    pub link_fingerprint: Vec<String>,
    /// A file of pinned fingerprints (one a line, `#` comments), like --link-fingerprint.
    #[arg(long)]
    pub link_trust: Option<PathBuf>,
    /// Allows a plaintext link to a host other than loopback (no fingerprint pinned).
    #[arg(long)]
    pub link_insecure: bool,
    /// How the bridge packs the LiDAR's sweeps for this harness: mm_zstd (1 mm, compressed:
    /// about a tenth of f32's bytes), f32_zstd (lossless, compressed) or f32 (lossless, as
    /// version 3 sent them).
    #[arg(long, default_value = "mm_zstd", value_parser = parse_sweep_encoding)]
    pub link_sweeps: acres_link_protocol::SweepEncoding,
    /// Starts the viewer of the out folder with the run (its URL first on stdout; it follows
    /// the runs and stays up after them until Ctrl-C).
    #[arg(long)]
    pub view: bool,
    /// The viewer's port (default: a free port).
    #[arg(long)]
    pub view_port: Option<u16>,
    /// No packaged game in the viewer (this build has none: the World is always drawn from the
    /// recording).
    #[arg(long)]
    pub no_game: bool,
    /// At most this many mission seconds per wall-clock second (0: no limit).
    #[arg(long, default_value_t = 0.0)]
    pub pace: f64,
    /// The tool ask_operator is on.
    #[arg(long)]
    pub operator: bool,
    /// The recovery mode of each run: off or menu.
    #[arg(long, value_parser = parse_recovery)]
    pub recovery_mode: Option<RecoveryMode>,
    /// A recovery option KEY=VALUE (hold_s=SECONDS).
    #[arg(long, value_parser = parse_kv)]
    #[serde(serialize_with = "super::command_line::kv_words")]
    pub recovery_option: Vec<(String, String)>,
    /// The scripted planner's think time per call, mission seconds.
    #[arg(long, default_value_t = 2.0)]
    pub think_s: f64,
    /// The world's seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// What each run records: all (episode.mcap and episode.interface.mcap), interface (the
    /// interface file only) or none.
    #[arg(long, default_value = "all", value_parser = super::sweep::parse_record)]
    pub record: crate::runfolder::kinds::Record,
    /// The model-call cache: replies stored in DIR under a key of the request and replayed
    /// with their latency when the same request comes again (off by default).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Runs the model server's conformance probe (as `models --config NAME --probe`) once before
    /// the runs: its table goes to stderr and its verdicts into each run row's `serving.probe`;
    /// a failed verdict (a server that would spoil the runs) stops before any run, exit 1.
    #[arg(long)]
    pub probe: bool,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
    /// (internal) run as a worker process: one JSON line per finished run on stdout.
    #[arg(long, hide = true)]
    pub child: bool,
    /// (internal) the call gate file of the invocation, made by the parent process.
    #[arg(long, hide = true)]
    pub gate_file: Option<PathBuf>,
    /// (internal) the parent's probe verdicts as JSON: a worker records them and does not probe.
    #[arg(long, hide = true)]
    pub probe_verdicts: Option<String>,
}

/// The model-call cache of `--cache DIR` (made when missing; exit 2 when it cannot be).
pub fn open_cache(dir: Option<&Path>) -> Result<Option<crate::planners::models::cache::CallCache>, Failure> {
    dir.map(crate::planners::models::cache::CallCache::open).transpose().map_err(Failure::input)
}

/// The model-config folder: `ACRES_MODEL_CONFIGS`, else the harness's `model_configs/`.
pub fn model_dir() -> PathBuf {
    std::env::var_os("ACRES_MODEL_CONFIGS")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(crate::planners::models::config::default_dir)
}

/// The gate file of an invocation: the parent makes it in the temp folder, workers get its path.
struct GateFile(Option<PathBuf>);

impl GateFile {
    fn make(a: &RunArgs, cfg: &crate::planners::models::config::ModelConfig) -> Result<Self, Failure> {
        if a.gate_file.is_some() || cfg.limits.calls_per_minute.is_none() {
            return Ok(GateFile(None));
        }
        let p =
            std::env::temp_dir().join(format!("acres-gate-{}-{}", std::process::id(), fnv(&cfg.service())));
        std::fs::write(&p, "")
            .map_err(|e| Failure::env(format!("{}: cannot make the call gate: {e}", p.display())))?;
        Ok(GateFile(Some(p)))
    }
}

impl Drop for GateFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

pub(crate) fn parse_mode(s: &str) -> Result<Mode, String> {
    serde_json::from_value(json!(s))
        .map_err(|_| format!("unknown mode \"{s}\"; expected classical, text, visual or checked"))
}

pub(crate) fn parse_profile(s: &str) -> Result<Profile, String> {
    serde_json::from_value(json!(s))
        .map_err(|_| format!("unknown profile \"{s}\"; expected vehicle or simulator"))
}

pub(crate) fn parse_world(s: &str) -> Result<World, String> {
    serde_json::from_value(json!(s)).map_err(|_| format!("unknown world \"{s}\"; expected core or link"))
}

pub(crate) fn parse_recovery(s: &str) -> Result<RecoveryMode, String> {
    match s {
        "off" => Ok(RecoveryMode::Off),
        "menu" => Ok(RecoveryMode::Menu),
        _ => Err(format!("unknown recovery mode \"{s}\"; expected off or menu")),
    }
}

pub(crate) fn parse_kv(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .ok_or_else(|| format!("\"{s}\" is not KEY=VALUE"))
}

/// The cost folder: `ACRES_COST_TABLES`, else `scenarios/costs` here, else the repository's.
pub fn costs_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("ACRES_COST_TABLES").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let local = PathBuf::from("scenarios/costs");
    if local.is_dir() {
        return local;
    }
    crate::planners::planning::costs::cost_folder(&repo_root())
}

/// The environment variable of the link's shared token.
pub const LINK_TOKEN_ENV: &str = "ACRES_LINK_TOKEN";

/// The link world's options of the command line (one run at a time: a bridge takes one
/// commander).
fn link_options(a: &RunArgs) -> Result<crate::world::link::LinkOptions, Failure> {
    if !(a.link_silent_s.is_finite() && a.link_silent_s > 0.0) {
        return Err(Failure::input("--link-silent-s must be a number of seconds > 0"));
    }
    if a.workers > 1 || a.concurrent > 1 {
        return Err(Failure::input("--world link runs one scenario at a time: --workers 1 --concurrent 1"));
    }
    let pins =
        crate::world::link::pins(&a.link_fingerprint, a.link_trust.as_deref(), &a.link_host, a.link_insecure)
            .map_err(Failure::input)?;
    Ok(crate::world::link::LinkOptions {
        host: a.link_host.clone(),
        port: a.link_port,
        silent_s: a.link_silent_s,
        token: std::env::var(LINK_TOKEN_ENV).ok().filter(|t| !t.is_empty()),
        pins,
        sweep_encoding: a.link_sweeps,
    })
}

/// A sweep encoding of `--link-sweeps`.
fn parse_sweep_encoding(word: &str) -> Result<acres_link_protocol::SweepEncoding, String> {
    acres_link_protocol::SweepEncoding::parse(word).ok_or_else(|| {
        let known: Vec<&str> = acres_link_protocol::SweepEncoding::ALL.iter().map(|e| e.as_str()).collect();
        format!("unknown sweep encoding \"{word}\": one of {}", known.join(", "))
    })
}

/// The maps folder and every scenario of the command line, each checked (its learned skill
/// folders too): bad input before anything runs.
fn load_scenarios(a: &RunArgs) -> Result<(PathBuf, Vec<Scenario>), Failure> {
    let maps = a.maps.clone().unwrap_or_else(|| maps_dir(&a.scenario));
    let scenarios = scenario::load_all(&a.scenario, &maps).map_err(|e| Failure::input(e.to_string()))?;
    if scenarios.is_empty() {
        return Err(Failure::input("no scenario in the given files or folders"));
    }
    for sc in &scenarios {
        acres_vehicle::learned::scenario_skills(sc).map_err(|e| Failure::input(e.to_string()))?;
    }
    Ok((maps, scenarios))
}

/// Runs the command.
pub fn run(a: RunArgs) -> Result<(), Failure> {
    let link = match a.world {
        World::Core => None,
        World::Link => Some(link_options(&a)?),
    };
    let model = crate::planners::models::resolve(&a.model, &model_dir())
        .map_err(|e| Failure::input(e.to_string()))?;
    if a.mode != Mode::Classical {
        // A missing key is a clear error before any run starts.
        model
            .config
            .api_key()
            .map_err(|e| Failure::input(format!("--model {}: {e}", model.file.display())))?;
    }
    check_numbers_and_paths(&a)?;
    let (maps, scenarios) = load_scenarios(&a)?;
    let probe = probe_verdicts(&a, &model)?;
    let tables = load_tables(&scenarios)?;
    let mc = &model.config;
    let opts = RunOptions {
        mode: a.mode,
        profile: a.profile,
        pace: a.pace,
        operator: a.operator,
        out: a.out.clone(),
        seed: a.seed,
        recovery_mode: a.recovery_mode,
        recovery_options: a.recovery_option.clone(),
        model: if a.mode == Mode::Classical { "none".into() } else { model.name.clone() },
        model_file: (a.mode != Mode::Classical).then(|| model.file.display().to_string()),
        call_s: mc.call_timeout_s,
        wake_s: mc.wake_timeout_s,
        calls_per_run: mc.limits.calls_per_run,
        secret_vars: mc.api_key_env.iter().cloned().collect(),
        record: a.record,
        link,
        planner: Some(PlannerInfo::of(a.mode, &model.name, mc.provider.as_str(), a.think_s)),
        probe: probe.clone(),
    };
    let gate = GateFile::make(&a, mc)?;
    let client_opts = crate::planners::models::ClientOptions {
        think_s: a.think_s,
        gate_file: a.gate_file.clone().or_else(|| gate.0.clone()),
        cache: open_cache(a.cache.as_deref())?,
    };
    let client = crate::planners::models::client(&model, &client_opts).map_err(Failure::input)?;
    // parallel_runs bounds the runs that use the service at once, in threads or processes.
    let mut a = a;
    if let Some(v) = &probe {
        // The workers record the parent's verdicts; they do not probe again.
        a.probe = false;
        a.probe_verdicts = Some(serde_json::to_string(v).unwrap_or_default());
    }
    if let Some(n) = mc.limits.parallel_runs.filter(|_| a.mode != Mode::Classical) {
        a.workers = a.workers.min(n).max(1);
        a.concurrent = a.concurrent.min(n).max(1);
    }
    let a = &a;
    for sc in &scenarios {
        crate::run::effective_recovery(sc, &opts).map_err(Failure::from)?;
    }
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Failure::env(format!("{}: cannot create: {e}", a.out.display())))?;
    let view_url = match a.view && !a.child {
        true => Some(super::view::start(
            &a.out,
            a.view_port.unwrap_or(0),
            true,
            Some(maps.clone()),
            crate::review::video::WorldChoice::Auto,
        )?),
        false => None,
    };
    let results = if a.workers > 1 && !a.child && scenarios.len() > 1 {
        run_workers(a, &scenarios, &maps, client_opts.gate_file.as_deref())?
    } else {
        run_here(a, &opts, &scenarios, &tables, client.as_ref())
    };
    if a.child {
        return Ok(());
    }
    report(a, &results, view_url)
}

/// The probe's verdicts for the run rows: a worker's from its parent (`--probe-verdicts`), else
/// the probe's when `--probe` asks for it (its table on stderr). A failed verdict stops here,
/// before any run (exit 1); `--probe` without a model server is bad input (exit 2).
fn probe_verdicts(
    a: &RunArgs,
    model: &crate::planners::models::config::Resolved,
) -> Result<Option<Verdicts>, Failure> {
    use crate::planners::models::conform;
    if let Some(json) = &a.probe_verdicts {
        return serde_json::from_str(json)
            .map(Some)
            .map_err(|e| Failure::input(format!("--probe-verdicts: {e}")));
    }
    if !a.probe {
        return Ok(None);
    }
    let provider = model.config.provider;
    if a.mode == Mode::Classical || provider == crate::planners::models::config::Provider::Scripted {
        return Err(Failure::input(format!(
            "--probe: the {} planner has no model server to probe (mode {}, provider {provider})",
            if a.mode == Mode::Classical { "classical" } else { "scripted" },
            a.mode.as_str()
        )));
    }
    let checks = conform::probe(model);
    let failed = conform::failed(&checks);
    if !a.quiet || !failed.is_empty() {
        eprintln!("acres-harness: the conformance probe of {} ({}):", model.name, model.config.base_url());
        eprint!("{}", conform::table(&checks));
    }
    if !failed.is_empty() {
        return Err(Failure::check(format!(
            "run --probe: the server of {} failed the probe ({}): nothing was run; the table above says why and how to fix it",
            model.name,
            failed.join(", ")
        )));
    }
    Ok(Some(conform::verdicts(&checks)))
}

/// The probe's verdict of each check.
type Verdicts = BTreeMap<String, crate::planners::models::conform::Verdict>;

/// Checks the numbers and the scenario paths of the command line.
fn check_numbers_and_paths(a: &RunArgs) -> Result<(), Failure> {
    if !(a.think_s.is_finite() && a.think_s >= 0.0 && a.pace.is_finite() && a.pace >= 0.0) {
        return Err(Failure::input("--think-s and --pace must be numbers >= 0"));
    }
    if a.workers == 0 || a.concurrent == 0 {
        return Err(Failure::input("--workers and --concurrent must be at least 1"));
    }
    for s in &a.scenario {
        if !s.exists() {
            return Err(Failure::input(format!("{}: no such scenario file or folder", s.display())));
        }
    }
    Ok(())
}

/// Prints one line a run and the summary (unless `--quiet`), keeps the viewer up (`--view`);
/// fails when a run did not succeed.
fn report(a: &RunArgs, results: &[Summary], view_url: Option<String>) -> Result<(), Failure> {
    let failed: Vec<&Summary> = results.iter().filter(|r| !r.success).collect();
    if !a.quiet {
        for r in results {
            println!(
                "{:<44} {:<8} {:<16} t={:>7.1} s  {}",
                r.scenario,
                if r.success { "ok" } else { "FAILED" },
                r.end,
                r.t_s,
                r.folder
            );
        }
        println!("{} runs, {} succeeded", results.len(), results.len() - failed.len());
    }
    if let Some(url) = view_url {
        eprintln!("the viewer stays up at {url} (Ctrl-C to stop)");
        super::view::park();
    }
    let environment = failed.iter().filter(|r| r.environment).count();
    for r in failed.iter().filter(|r| r.environment && a.quiet) {
        // --quiet prints no run lines: the cause of a run the machine failed is still said.
        eprintln!("acres-harness: {}: {}", r.scenario, r.end);
    }
    if environment > 0 {
        return Err(Failure::env(format!(
            "{environment} of {} runs could not be made (the machine, not the input or the planner): \
             see their errors above",
            results.len()
        )));
    }
    if !failed.is_empty() {
        return Err(Failure::check(format!("{} of {} runs did not succeed", failed.len(), results.len())));
    }
    Ok(())
}

/// The cost table of each (map, condition) of the scenarios.
pub(crate) fn load_tables(scenarios: &[Scenario]) -> Result<BTreeMap<(String, String), CostTable>, Failure> {
    let dir = costs_dir();
    let mut tables = BTreeMap::new();
    for sc in scenarios {
        let key = (sc.map_data.name.clone(), sc.condition.as_str().to_string());
        if let std::collections::btree_map::Entry::Vacant(slot) = tables.entry(key) {
            let (map, condition) = slot.key();
            let t = CostTable::load(&dir, map, condition).map_err(|e| Failure::input(e.to_string()))?;
            slot.insert(t);
        }
    }
    Ok(tables)
}

/// One finished run, as the parent prints it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Summary {
    scenario: String,
    end: String,
    success: bool,
    t_s: f64,
    folder: String,
    /// The run could not be made for a reason of the machine (exit 3).
    #[serde(default)]
    environment: bool,
}

fn summary(sc: &Scenario, r: Result<RunOutcome, anyhow::Error>) -> Summary {
    match r {
        Ok(o) => Summary {
            scenario: sc.id.clone(),
            end: o.end.to_string(),
            success: o.success,
            t_s: o.t_s,
            folder: o.folder.display().to_string(),
            environment: false,
        },
        Err(e) => Summary {
            scenario: sc.id.clone(),
            end: format!("error: {e:#}"),
            success: false,
            t_s: 0.0,
            folder: String::new(),
            environment: super::is_environment(&e),
        },
    }
}

fn run_here(
    a: &RunArgs,
    opts: &RunOptions,
    scenarios: &[Scenario],
    tables: &BTreeMap<(String, String), CostTable>,
    client: &dyn crate::planners::Client,
) -> Vec<Summary> {
    let queue = Mutex::new(0usize);
    let results: Mutex<Vec<(usize, Summary)>> = Mutex::new(Vec::new());
    let progress = Progress::new(scenarios.len(), a.quiet || a.child);
    std::thread::scope(|s| {
        for _ in 0..a.concurrent.min(scenarios.len()) {
            s.spawn(|| loop {
                let i = {
                    let mut q = queue.lock().expect("queue lock");
                    let i = *q;
                    *q += 1;
                    i
                };
                let Some(sc) = scenarios.get(i) else { break };
                progress.started(&sc.id);
                let table = tables[&(sc.map_data.name.clone(), sc.condition.as_str().to_string())].clone();
                let planner =
                    if opts.mode == Mode::Classical { Planner::Classical } else { Planner::Model(client) };
                let r = summary(sc, run_scenario(sc, opts, planner, table));
                if a.child {
                    let line = serde_json::to_string(&r).unwrap_or_default();
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{line}");
                    let _ = out.flush();
                }
                progress.finished(&r);
                results.lock().expect("results lock").push((i, r));
            });
        }
    });
    let mut r = results.into_inner().unwrap_or_default();
    r.sort_by_key(|(i, _)| *i);
    r.into_iter().map(|(_, s)| s).collect()
}

struct Progress {
    total: usize,
    done: Mutex<usize>,
    on: bool,
}

impl Progress {
    fn new(total: usize, quiet: bool) -> Self {
        Progress { total, done: Mutex::new(0), on: !quiet && std::io::stderr().is_terminal() }
    }
    fn started(&self, id: &str) {
        if self.on {
            let d = *self.done.lock().expect("progress lock");
            eprint!("\r\x1b[K[{d}/{}] running {id}", self.total);
        }
    }
    fn finished(&self, r: &Summary) {
        let mut d = self.done.lock().expect("progress lock");
        *d += 1;
        if self.on {
            eprint!(
                "\r\x1b[K[{}/{}] {} {}",
                *d,
                self.total,
                r.scenario,
                if r.success { "ok" } else { "FAILED" }
            );
            if *d == self.total {
                eprintln!();
            }
        }
    }
}

/// Runs each scenario in a child process of this binary, `workers` at a time; a slot is reused
/// as soon as any child ends.
fn run_workers(
    a: &RunArgs,
    scenarios: &[Scenario],
    maps: &Path,
    gate_file: Option<&Path>,
) -> Result<Vec<Summary>, Failure> {
    let exe = std::env::current_exe().map_err(|e| Failure::env(format!("cannot find this program: {e}")))?;
    let progress = Progress::new(scenarios.len(), a.quiet);
    let mut results: Vec<Option<Summary>> = vec![None; scenarios.len()];
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Summary)>();
    let mut running = 0;
    let mut next = 0;
    while next < scenarios.len() || running > 0 {
        while running < a.workers && next < scenarios.len() {
            let sc = &scenarios[next];
            progress.started(&sc.id);
            let mut child: Child = Command::new(&exe)
                .args(child_args(a, &sc.file, maps, gate_file))
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| Failure::env(format!("cannot start a worker: {e}")))?;
            let (i, id, tx) = (next, sc.id.clone(), tx.clone());
            std::thread::spawn(move || {
                // The worker prints one line per run.
                let mut line = String::new();
                if let Some(o) = child.stdout.take() {
                    let _ = BufReader::new(o).read_line(&mut line);
                }
                let status = child.wait();
                let s = serde_json::from_str::<Summary>(line.trim()).unwrap_or_else(|_| Summary {
                    scenario: id,
                    end: format!("error: the worker ended ({status:?}) without a result"),
                    success: false,
                    t_s: 0.0,
                    folder: String::new(),
                    environment: true,
                });
                let _ = tx.send((i, s));
            });
            running += 1;
            next += 1;
        }
        let (i, s) = rx.recv().map_err(|e| Failure::env(format!("lost a worker: {e}")))?;
        running -= 1;
        progress.finished(&s);
        results[i] = Some(s);
    }
    Ok(results.into_iter().flatten().collect())
}

/// A worker's command line: this invocation's options (every one, from the struct: see
/// `command_line`) for one scenario, one at a time, quiet, without the viewer (the parent serves
/// it).
fn child_args(a: &RunArgs, file: &Path, maps: &Path, gate_file: Option<&Path>) -> Vec<String> {
    super::command_line::run_command_line(&RunArgs {
        scenario: vec![file.to_path_buf()],
        maps: Some(maps.to_path_buf()),
        workers: 1,
        concurrent: 1,
        view: false,
        view_port: None,
        quiet: true,
        child: true,
        gate_file: gate_file.map(Path::to_path_buf),
        ..a.clone()
    })
}
