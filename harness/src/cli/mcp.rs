//! `acres-harness mcp`: one scenario run with an external agent as the planner, served as an MCP
//! server (see [`crate::agents::mcp`]); stdio by default, streamable HTTP on 127.0.0.1 with
//! `--http PORT` (the URL is the first line on stdout). Exit 0 when the run succeeded, 1 when it
//! did not, 2 on bad input.
//!
//! ```text
//! acres-harness mcp --scenario scenarios/t1_01_scout_one_field.json --mode checked --out runs/a --agent-name claude-code
//! acres-harness mcp --scenario scenarios/t1_01_scout_one_field.json --out runs/a --agent-name my-agent --http 0
//! ```

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::run::{costs_dir, parse_kv, parse_mode, parse_profile, parse_recovery};
use super::{maps_dir, Failure};
use crate::agents::{AgentRun, READ_ONLY_TOOLS};
use crate::planners::planning::costs::CostTable;
use crate::run::{effective_recovery, system_text, RunOptions, RunOutcome};
use crate::runfolder::kinds::{AgentFace, PlannerKind};
use crate::runfolder::rows::{Mode, PlannerInfo, Profile, ToolDef};
use crate::scenario::{self, RecoveryMode};

/// The options of a run with an external agent (shared by `mcp` and `agent serve`).
#[derive(Debug, Clone, Args)]
pub struct AgentRunArgs {
    /// The scenario file.
    #[arg(long)]
    pub scenario: PathBuf,
    /// text, visual or checked.
    #[arg(long, default_value = "checked", value_parser = parse_mode)]
    pub mode: Mode,
    /// The folder of the run folders.
    #[arg(long)]
    pub out: PathBuf,
    /// The agent's name: the run row's model and the run folder's name (letters, digits, `-`, `_`, `.`).
    #[arg(long)]
    pub agent_name: String,
    /// The folder of the maps (default: `maps/` beside the scenario, else `scenarios/maps`).
    #[arg(long)]
    pub maps: Option<PathBuf>,
    /// vehicle or simulator.
    #[arg(long, default_value = "vehicle", value_parser = parse_profile)]
    pub profile: Profile,
    /// At most this many mission seconds per wall-clock second (0: no limit).
    #[arg(long, default_value_t = 0.0)]
    pub pace: f64,
    /// The tool ask_operator is on.
    #[arg(long)]
    pub operator: bool,
    /// The recovery mode: off or menu.
    #[arg(long, value_parser = parse_recovery)]
    pub recovery_mode: Option<RecoveryMode>,
    /// A recovery option KEY=VALUE (hold_s=SECONDS).
    #[arg(long, value_parser = parse_kv)]
    pub recovery_option: Vec<(String, String)>,
    /// The world's seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How long the run waits for the agent's first wait_for_wake, s.
    #[arg(long, default_value_t = 300.0)]
    pub connect_timeout_s: f64,
    /// Register only the tools that change nothing (look, read) and wait_for_wake.
    #[arg(long)]
    pub read_only: bool,
}

/// Options of `mcp`.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    /// The run.
    #[command(flatten)]
    pub run: AgentRunArgs,
    /// Serve streamable HTTP on 127.0.0.1:PORT (0: a free port) instead of stdio.
    #[arg(long)]
    pub http: Option<u16>,
    /// With --http: how long the server stays up after the run has ended, s.
    #[arg(long, default_value_t = 10.0)]
    pub linger_s: f64,
}

/// A run made ready: the run, the tools the face registers, the instructions.
pub struct Prepared {
    /// The run.
    pub run: AgentRun,
    /// The tools the face registers (without `wait_for_wake`).
    pub tools: Vec<ToolDef>,
    /// The system text.
    pub instructions: String,
}

/// Checks the options and loads the scenario and its cost table; `face` is what the run row
/// records.
pub fn prepare(a: &AgentRunArgs, face: AgentFace) -> Result<Prepared, Failure> {
    let name_ok = !a.agent_name.is_empty()
        && a.agent_name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !name_ok {
        return Err(Failure::input(format!(
            "--agent-name \"{}\": use letters, digits, '-', '_' and '.' only",
            a.agent_name
        )));
    }
    if a.mode == Mode::Classical {
        return Err(Failure::input("--mode classical has no planner to attach: use text, visual or checked"));
    }
    if !(a.pace.is_finite() && a.pace >= 0.0 && a.connect_timeout_s.is_finite() && a.connect_timeout_s > 0.0)
    {
        return Err(Failure::input("--pace must be >= 0 and --connect-timeout-s > 0"));
    }
    if !a.scenario.is_file() {
        return Err(Failure::input(format!("{}: no such scenario file", a.scenario.display())));
    }
    let inputs = [a.scenario.clone()];
    let maps = a.maps.clone().unwrap_or_else(|| maps_dir(&inputs));
    let mut scenarios = scenario::load_all(&inputs, &maps).map_err(|e| Failure::input(e.to_string()))?;
    let sc = scenarios.pop().ok_or_else(|| Failure::input("no scenario in the given file"))?;
    acres_vehicle::learned::scenario_skills(&sc).map_err(|e| Failure::input(e.to_string()))?;
    let table = CostTable::load(&costs_dir(), &sc.map_data.name, sc.condition.as_str())
        .map_err(|e| Failure::input(e.to_string()))?;
    let mut opts = RunOptions::new(&a.out);
    opts.mode = a.mode;
    opts.profile = a.profile;
    opts.pace = a.pace;
    opts.operator = a.operator;
    opts.seed = a.seed;
    opts.recovery_mode = a.recovery_mode;
    opts.recovery_options = a.recovery_option.clone();
    opts.model = a.agent_name.clone();
    opts.planner = Some(planner_info(a, face));
    effective_recovery(&sc, &opts).map_err(Failure::from)?;
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Failure::env(format!("{}: cannot create: {e}", a.out.display())))?;
    let mut tools = crate::tools::scenario_tools(a.mode, a.profile, a.operator, &sc);
    if a.read_only {
        tools.retain(|t| READ_ONLY_TOOLS.contains(&t.name.as_str()));
    }
    let instructions = system_text(&sc, a.mode, a.profile);
    let run = AgentRun { scenario: sc, opts, table, connect_s: a.connect_timeout_s };
    Ok(Prepared { run, tools, instructions })
}

/// The run row's planner of an agent's run.
fn planner_info(a: &AgentRunArgs, face: AgentFace) -> PlannerInfo {
    let mut options = serde_json::Map::new();
    options.insert("agent_name".into(), json!(a.agent_name));
    options.insert("read_only".into(), json!(a.read_only));
    options.insert("connect_timeout_s".into(), json!(a.connect_timeout_s));
    let mut versions = serde_json::Map::new();
    versions.insert("harness".into(), json!(crate::HARNESS_VERSION));
    if face != AgentFace::Line {
        versions.insert("rmcp".into(), json!(crate::agents::mcp::RMCP_VERSION));
    }
    PlannerInfo { kind: PlannerKind::Agent, face: Some(face), options, versions }
}

/// The runtime of a face: two workers (the loop has a thread of its own).
pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::env(format!("cannot start the async runtime: {e}")))
}

/// Prints the run's line on stderr (stdout may be the MCP transport); fails when it did not succeed.
pub fn finish(outcome: anyhow::Result<RunOutcome>) -> Result<(), Failure> {
    let o = outcome?;
    eprintln!(
        "{:<8} {:<16} t={:>7.1} s  {}",
        if o.success { "ok" } else { "FAILED" },
        o.end.as_str(),
        o.t_s,
        o.folder.display()
    );
    if !o.success {
        return Err(Failure::check(format!("the run ended {} and did not succeed", o.end.as_str())));
    }
    Ok(())
}

/// Runs the command.
pub fn run(a: McpArgs) -> Result<(), Failure> {
    let p = prepare(&a.run, if a.http.is_some() { AgentFace::McpHttp } else { AgentFace::McpStdio })?;
    let rt = runtime()?;
    let (port, handle) = crate::agents::start(p.run);
    let face = crate::agents::mcp::McpFace::new(port, &p.tools, &p.instructions);
    let served = match a.http {
        Some(http_port) => rt.block_on(async {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", http_port))
                .await
                .map_err(|e| Failure::env(format!("--http {http_port}: cannot bind 127.0.0.1: {e}")))?;
            let addr = listener.local_addr().map_err(|e| Failure::env(e.to_string()))?;
            println!("http://{addr}/mcp");
            let _ = std::io::stdout().flush();
            crate::agents::mcp::serve_http(face, listener, a.linger_s)
                .await
                .map_err(|e| Failure::input(e.to_string()))
        }),
        None => rt.block_on(crate::agents::mcp::serve_stdio(face)).map_err(|e| Failure::input(e.to_string())),
    };
    let outcome = handle.join().map_err(|_| Failure::env("the run's thread panicked"))?;
    served?;
    finish(outcome)
}
