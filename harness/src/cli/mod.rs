//! The commands of `acres-harness`, one module each with a `run()`; `main` only parses and maps
//! the result to an exit code, the same for every command: 0 ok, 1 a failed check (a run that
//! did not succeed, a folder that does not validate, a replay that differs), 2 bad input or usage
//! (nothing is run), 3 the environment (a folder that cannot be written, a port that cannot be
//! bound, a worker that cannot start or was lost, a bridge that cannot be reached).
//!
//! ```text
//! acres-harness run --scenario scenarios --model scripted --mode checked --out runs/a --workers 2
//! acres-harness score runs/a [--json]
//! acres-harness validate runs/a
//! acres-harness replay runs/a/t2_06_truck_on_the_lane__checked__scripted
//! acres-harness view runs/a [--follow] [--port N]
//! acres-harness video runs/a/t2_06_truck_on_the_lane__checked__scripted --out truck.mp4
//! acres-harness tools --style openai|openai-responses|anthropic|mcp [--mode checked]
//! acres-harness mcp --scenario scenarios/t1_01_scout_one_field.json --out runs/a --agent-name claude-code [--http 0]
//! acres-harness agent serve --scenario F --out runs/a --agent-name sh --socket S; agent send|wait|status|end
//! acres-harness skill --install .claude/skills
//! acres-harness planners [--smoke] [--json]
//! acres-harness proxy --upstream https://api.anthropic.com --key-env ANTHROPIC_API_KEY --run runs/a/<run folder>
//! acres-harness learn-costs [--map scenarios/maps/default.json] [--out scenarios/costs]
//! acres-harness sweep sweep.toml --out sweeps/a [--shard 2/3] [--list] [--emit slurm|k8s --shards 3]
//! acres-harness leaderboard sweeps/a [--json] [--csv] [--markdown] [--svg F] [--png F]
//! ```

pub mod agent;
pub mod command_line;
pub mod leaderboard;
pub mod mcp;
pub mod planners;
pub mod proxy;
pub mod replay;
pub mod run;
pub mod skill;
pub mod sweep;
pub mod tools;
pub mod video;
pub mod view;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// An error with its exit code.
#[derive(Debug)]
pub struct Failure {
    /// 1: a check failed; 2: bad input or usage; 3: the environment.
    pub code: u8,
    /// What to print.
    pub message: String,
}

impl Failure {
    /// Bad input (exit 2).
    pub fn input(message: impl Into<String>) -> Self {
        Failure { code: 2, message: message.into() }
    }
    /// A failed check (exit 1).
    pub fn check(message: impl Into<String>) -> Self {
        Failure { code: 1, message: message.into() }
    }
    /// The environment: a resource missing, a worker lost, a port taken (exit 3).
    pub fn env(message: impl Into<String>) -> Self {
        Failure { code: EXIT_ENVIRONMENT, message: message.into() }
    }
}

/// The exit code of a failure of the environment (not of the input, not of a check).
pub const EXIT_ENVIRONMENT: u8 = 3;

/// True when `e` says the machine failed the run ([`crate::run::Environment`] in its chain).
pub fn is_environment(e: &anyhow::Error) -> bool {
    // As an error of the chain, or as the context an error was given.
    e.downcast_ref::<crate::run::Environment>().is_some()
        || e.chain().any(|c| c.is::<crate::run::Environment>())
}

impl From<anyhow::Error> for Failure {
    /// An error of the environment exits 3; any other error is of the input (exit 2).
    fn from(e: anyhow::Error) -> Self {
        let message = format!("{e:#}");
        if is_environment(&e) {
            Failure::env(message)
        } else {
            Failure::input(message)
        }
    }
}

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "acres-harness",
    version,
    about = "Runs mission scenarios with a planner in the loop of a scouting vehicle"
)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Runs each scenario of the given files or folders.
    Run(Box<run::RunArgs>),
    /// Runs a recorded run again with its recorded replies and latencies (no model call).
    Replay(replay::ReplayArgs),
    /// Prints the score table of each run below the folders.
    Score {
        /// Run folders or folders of run folders.
        #[arg(required = true)]
        folders: Vec<PathBuf>,
        /// Print the full scores as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Examines run folders against the recording contract acres-harness-run-1.
    Validate {
        /// Run folders or folders of run folders.
        #[arg(required = true)]
        folders: Vec<PathBuf>,
    },
    /// Serves the viewer of a run folder or a folder of them on 127.0.0.1 (the URL first).
    View(view::ViewArgs),
    /// Makes an MP4 video of a run folder (1920 x 1080, the viewer's parts) and its report.
    Video(video::VideoArgs),
    /// Lists the model configurations; `--config NAME` asks that server for its models and sends
    /// two small test requests; `--probe` runs the conformance probe (exit 1 on a failed verdict).
    Models {
        /// Ask the server of one configuration (a name or a TOML file) for its models.
        #[arg(long)]
        config: Option<String>,
        /// `cache-key`: the model-call cache's key of a request and what went into it.
        #[command(subcommand)]
        action: Option<ModelsAction>,
        /// With --config: the conformance probe (tools, parallel calls, streaming, pictures,
        /// structured outputs, the context window, reasoning), a table of verdicts.
        #[arg(long, requires = "config")]
        probe: bool,
        /// With --probe: the verdicts as JSON.
        #[arg(long, requires = "probe")]
        json: bool,
    },
    /// Runs the stub model server (OpenAI chat completions and Anthropic messages on
    /// 127.0.0.1) from a script of turns, recording every request body.
    StubServer {
        /// The script of turns (JSON).
        #[arg(long)]
        script: PathBuf,
        /// Append every request (path and body) to this JSONL file.
        #[arg(long)]
        record: Option<PathBuf>,
        /// The port (0: a free one); the URL is the first line on stdout.
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Drives every mission leg of a map under every condition in ACRES Core and writes the
    /// cost tables the planners' cost and checks use.
    LearnCosts {
        /// The map file.
        #[arg(long, default_value = "scenarios/maps/default.json")]
        map: PathBuf,
        /// The output folder (`ACRES_COST_TABLES` when set).
        #[arg(long, env = "ACRES_COST_TABLES", default_value = "scenarios/costs")]
        out: PathBuf,
    },
    /// Prints the tool definitions of a mode in the shape of one tool-calling API.
    Tools(tools::ToolsArgs),
    /// Runs one scenario with an external agent as the planner, served as an MCP server.
    Mcp(Box<mcp::McpArgs>),
    /// Writes the agent skill acres-planner (SKILL.md) into a skills folder.
    Skill(skill::SkillArgs),
    /// The line protocol face: `agent serve` runs one scenario on a Unix socket; `agent send`,
    /// `wait`, `status`, `end` print one JSON line each.
    Agent {
        /// The agent command.
        #[command(subcommand)]
        command: agent::AgentCommand,
    },
    /// Lists every planner with its availability; `--smoke` runs each once with no model.
    Planners(planners::PlannersArgs),
    /// The metering model proxy: relays an agent's model calls (OpenAI, Anthropic) from
    /// 127.0.0.1 to the service and records their tokens, cost and latency in its run folder.
    Proxy(proxy::ProxyArgs),
    /// Runs a sweep spec (models × modes × profiles × scenarios × repeats), or one shard of it;
    /// finished runs are skipped; `--emit slurm|k8s` prints its scheduler files.
    Sweep(Box<sweep::SweepArgs>),
    /// Merges sweep folders (shards) and prints the leaderboard.
    Leaderboard(leaderboard::LeaderboardArgs),
}

/// Runs the parsed command line.
pub fn main_with(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Run(a) => run::run(*a),
        Command::Replay(a) => replay::run(a),
        Command::Score { folders, json } => score(&folders, json),
        Command::Validate { folders } => validate(&folders),
        Command::View(a) => view::run(a),
        Command::Video(a) => video::run(a),
        Command::Models { action: Some(ModelsAction::CacheKey(k)), .. } => cache_key(k),
        Command::Models { config: Some(c), probe: true, json, action: None } => conformance(&c, json),
        Command::Models { config, .. } => models(config.as_deref()),
        Command::StubServer { script, record, port } => {
            crate::planners::models::stub::serve(&script, record, port).map_err(Failure::input)
        }
        Command::Tools(a) => tools::run(a),
        Command::Mcp(a) => mcp::run(*a),
        Command::Skill(a) => skill::run(a),
        Command::Agent { command } => agent::run(command),
        Command::LearnCosts { map, out } => learn_costs(&map, &out),
        Command::Planners(a) => planners::run(a),
        Command::Proxy(a) => proxy::run(a),
        Command::Sweep(a) => sweep::run(*a),
        Command::Leaderboard(a) => leaderboard::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("acres-harness: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// What `models` does besides listing and probing.
#[derive(Debug, Subcommand)]
pub enum ModelsAction {
    /// Prints the model-call cache's key of a request body and what went into it.
    CacheKey(CacheKeyArgs),
}

/// Options of `models cache-key`.
#[derive(Debug, clap::Args)]
pub struct CacheKeyArgs {
    /// The model configuration (a name or a TOML file) the request was sent with.
    #[arg(long)]
    pub config: String,
    /// The request body (JSON), or a line of the stub server's request log (`{"path", "body"}`).
    #[arg(long)]
    pub request: PathBuf,
    /// The run's seed (default: the body's `seed`, else 1, the default of `run`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// A cache folder: say whether it holds the key's entry.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
}

fn cache_key(a: CacheKeyArgs) -> Result<(), Failure> {
    use crate::planners::models::cache::{key, CallCache};
    let r = crate::planners::models::resolve(&a.config, &run::model_dir())
        .map_err(|e| Failure::input(e.to_string()))?;
    let text = std::fs::read_to_string(&a.request)
        .map_err(|e| Failure::input(format!("{}: {e}", a.request.display())))?;
    let v: serde_json::Value = serde_json::from_str(text.trim())
        .map_err(|e| Failure::input(format!("{}: not one JSON value: {e}", a.request.display())))?;
    let body = match (&v["body"], &v["path"]) {
        (b @ serde_json::Value::Object(_), serde_json::Value::String(_)) => b.clone(),
        _ => v,
    };
    let mut cfg = r.config.clone();
    cfg.seed = Some(a.seed.or_else(|| body["seed"].as_u64()).unwrap_or(1));
    let (k, parts) = key(&cfg, body.to_string().as_bytes())
        .map_err(|e| Failure::input(format!("{}: {e}", a.request.display())))?;
    println!("key {k}");
    println!("format {}", parts.format);
    println!("provider {}", parts.provider);
    println!("base_url {}", parts.base_url);
    println!("model {}", parts.model);
    println!("run_seed {}", parts.run_seed.map_or_else(|| "none".into(), |s| s.to_string()));
    println!("body_sha256 {} ({} bytes, keys sorted, no spaces)", parts.body_sha256, parts.body_bytes);
    if let Some(dir) = &a.cache {
        let c = CallCache::open(dir).map_err(Failure::input)?;
        let state = if c.get(&k).is_some() { "present" } else { "absent" };
        println!("entry {} ({state})", c.path(&k).display());
    }
    Ok(())
}

fn conformance(name: &str, as_json: bool) -> Result<(), Failure> {
    use crate::planners::models::conform;
    let r = crate::planners::models::resolve(name, &run::model_dir())
        .map_err(|e| Failure::input(e.to_string()))?;
    let checks = conform::probe(&r);
    if as_json {
        println!("{}", serde_json::to_string_pretty(&checks).unwrap_or_default());
    } else {
        println!(
            "{}: provider {}, model {}, {}",
            r.name,
            r.config.provider,
            r.config.model,
            r.config.base_url()
        );
        print!("{}", conform::table(&checks));
    }
    let failed: Vec<&str> =
        checks.iter().filter(|c| c.verdict == conform::Verdict::Fail).map(|c| c.check.as_str()).collect();
    if !failed.is_empty() {
        return Err(Failure::check(format!("models --config {name} --probe: failed: {}", failed.join(", "))));
    }
    Ok(())
}

fn models(config: Option<&str>) -> Result<(), Failure> {
    let dir = run::model_dir();
    let Some(name) = config else {
        let list = crate::planners::models::config::list(&dir);
        if list.is_empty() {
            return Err(Failure::input(format!("models: no model file in {}", dir.display())));
        }
        println!("{:<24} {:<10} {:<24} address", "name", "provider", "model");
        for (name, file, c) in list {
            match c {
                Ok(c) => {
                    let addr = if c.provider == crate::planners::models::config::Provider::Scripted {
                        "(in the process)".to_string()
                    } else {
                        c.base_url()
                    };
                    println!("{name:<24} {:<10} {:<24} {addr}", c.provider, c.model);
                }
                Err(e) => println!("{name:<24} (invalid: {e}) [{}]", file.display()),
            }
        }
        return Ok(());
    };
    let r = crate::planners::models::resolve(name, &dir).map_err(|e| Failure::input(e.to_string()))?;
    println!("{}: provider {}, model {}, {}", r.name, r.config.provider, r.config.model, r.config.base_url());
    let checks = crate::planners::models::probe::probe(&r);
    let failed = checks.iter().filter(|c| !c.ok).count();
    for c in &checks {
        println!("{} {}: {}", if c.ok { "ok  " } else { "FAIL" }, c.what, c.detail);
    }
    if failed > 0 {
        return Err(Failure::check(format!(
            "models --config {name}: {failed} of {} checks failed",
            checks.len()
        )));
    }
    Ok(())
}

fn learn_costs(map: &Path, out: &Path) -> Result<(), Failure> {
    use acres_farm::{Condition, Map};
    let m = std::sync::Arc::new(Map::load(map).map_err(|e| Failure::input(e.to_string()))?);
    std::fs::create_dir_all(out).map_err(|e| Failure::env(format!("{}: {e}", out.display())))?;
    for c in Condition::ALL {
        let t = crate::planners::planning::learn::learn_table(&m, c)
            .map_err(|e| Failure::input(e.to_string()))?;
        let file = out.join(crate::planners::planning::costs::table_file_name(&m.name, c.as_str()));
        std::fs::write(&file, t.to_json()).map_err(|e| Failure::env(format!("{}: {e}", file.display())))?;
        println!("{}: {} legs", file.display(), t.legs.len());
    }
    Ok(())
}

fn existing(folders: &[PathBuf]) -> Result<(), Failure> {
    for f in folders {
        if !f.exists() {
            return Err(Failure::input(format!("{}: no such file or folder", f.display())));
        }
    }
    Ok(())
}

fn score(folders: &[PathBuf], json: bool) -> Result<(), Failure> {
    existing(folders)?;
    let mut lines = Vec::new();
    for f in folders {
        lines.extend(crate::runfolder::load_scores(f));
    }
    lines.sort_by(|a, b| a.folder.cmp(&b.folder));
    if lines.is_empty() {
        return Err(Failure::input("score: no run folder below the given folders"));
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&crate::runfolder::to_json(&lines)).unwrap_or_default());
    } else {
        print!("{}", crate::runfolder::format_table(&lines));
    }
    Ok(())
}

fn validate(folders: &[PathBuf]) -> Result<(), Failure> {
    existing(folders)?;
    let mut bad = 0;
    let mut n = 0;
    for f in folders {
        let reports = crate::runfolder::validate_tree(f);
        if reports.is_empty() {
            println!("{}: invalid: no run.jsonl below this folder", f.display());
            bad += 1;
        }
        for (path, report) in reports {
            n += 1;
            if !report.is_ok() {
                bad += 1;
            }
            println!("{}: {report}", path.display());
        }
    }
    if bad > 0 {
        return Err(Failure::check(format!(
            "validate: {bad} of {n} run folders do not agree with acres-harness-run-1"
        )));
    }
    println!("{n} run folders agree with acres-harness-run-1");
    Ok(())
}

/// The maps folder for scenarios: `maps/` beside the first input (or in it, for a folder), else
/// `scenarios/maps` under the current folder, else the repository's.
pub fn maps_dir(inputs: &[PathBuf]) -> PathBuf {
    for i in inputs {
        let base = if i.is_dir() { i.clone() } else { i.parent().map(Path::to_path_buf).unwrap_or_default() };
        if base.join("maps").is_dir() {
            return base.join("maps");
        }
    }
    let local = PathBuf::from("scenarios/maps");
    if local.is_dir() {
        return local;
    }
    repo_root().join("scenarios").join("maps")
}

/// The repository root this binary was built from.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}
