//! The smoke run of every planner (`acres-harness planners --smoke`): one shipped scenario per
//! planner, with no model and no network, each into its own folder below a temporary one.
//!
//! - `scripted`: the scripted stand-in; `classical`: the rule set of mode classical.
//! - `openai`, `anthropic`: the real model clients against the stub model server started in the
//!   process on 127.0.0.1 (script `{"then": "scripted"}`), through a model file pointing at it.
//! - `agent`: the line protocol face on a Unix socket, driven through the socket by a scripted
//!   agent: the scripted planner's session is the brain (each wake-up's text and each tool
//!   result go in, its tool calls go out through the socket as `send`, its end of turn as `wait`).
//! - `mcp`: the MCP face's server on an in-process pipe, spoken to as over stdio by the same
//!   scripted brain ([`super::smoke_mcp`]).
//!
//! Each run folder must agree with the recording contract (`validate_folder`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use serde_json::{json, Value};

use crate::agents::line::{bind, request, serve, LineCommand, LineFace};
use crate::agents::{start, AgentRun};
use crate::planners::models::stub::{self, script::Script};
use crate::planners::models::{client, config::resolve, ClientOptions};
use crate::planners::planning::costs::CostTable;
use crate::planners::scripted::{ScriptedClient, ScriptedSession};
use crate::planners::{Block, CallCtx, Client, Session};
use crate::run::{run_scenario, Planner, RunOptions, RunOutcome};
use crate::runfolder::rows::{Mode, PlannerInfo};
use crate::runfolder::validate_folder;
use crate::scenario::{self, Scenario};

/// The planners the smoke run runs, in order.
pub const SMOKE_PLANNERS: [&str; 6] = ["scripted", "classical", "openai", "anthropic", "agent", "mcp"];

/// What the smoke run of one planner gave.
#[derive(Debug, Clone, Serialize)]
pub struct SmokeResult {
    /// The planner.
    pub planner: String,
    /// The run succeeded and its folder validates.
    pub ok: bool,
    /// The end code (none when the run could not start).
    pub end: Option<String>,
    /// Wall time of the run, s.
    pub wall_s: f64,
    /// The run folder.
    pub folder: Option<PathBuf>,
    /// What went wrong, when it did.
    pub detail: String,
}

/// Where the smoke runs read and write.
pub struct SmokeSetup {
    /// The scenario file.
    pub scenario: PathBuf,
    /// The maps folder.
    pub maps: PathBuf,
    /// The cost tables' folder.
    pub costs: PathBuf,
    /// The folder of the run folders (one sub-folder per planner).
    pub out: PathBuf,
}

/// Runs the smoke run of each planner of [`SMOKE_PLANNERS`]; an error only when the scenario or
/// its cost table cannot be loaded.
pub fn smoke_all(s: &SmokeSetup) -> Result<Vec<SmokeResult>, String> {
    let mut scenarios = scenario::load_all(std::slice::from_ref(&s.scenario), &s.maps)
        .map_err(|e| format!("{}: {e}", s.scenario.display()))?;
    let sc = scenarios.pop().ok_or_else(|| format!("{}: no scenario", s.scenario.display()))?;
    let table =
        CostTable::load(&s.costs, &sc.map_data.name, sc.condition.as_str()).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for p in SMOKE_PLANNERS {
        let dir = s.out.join(p);
        let t0 = Instant::now();
        let r = match p {
            "scripted" => plain(&sc, &table, &dir, Mode::Checked, &ScriptedClient::new(0.0), "scripted"),
            "classical" => plain(&sc, &table, &dir, Mode::Classical, &ScriptedClient::new(0.0), "openai"),
            "openai" | "anthropic" => through_stub(&sc, &table, &dir, p),
            "agent" => through_line(&sc, &table, &dir),
            _ => super::smoke_mcp::through_mcp(&sc, &table, &dir),
        };
        out.push(result(p, r, t0.elapsed().as_secs_f64()));
    }
    Ok(out)
}

fn result(planner: &str, r: Result<RunOutcome, String>, wall_s: f64) -> SmokeResult {
    let (ok, end, folder, detail) = match r {
        Err(e) => (false, None, None, e),
        Ok(o) => {
            let report = validate_folder(&o.folder);
            let detail = match (o.success, report.is_ok()) {
                (true, true) => String::new(),
                (false, _) => format!("the run did not succeed ({})", o.end.as_str()),
                (true, false) => format!("the folder does not validate: {report}"),
            };
            (detail.is_empty(), Some(o.end.as_str().to_string()), Some(o.folder), detail)
        }
    };
    SmokeResult { planner: planner.into(), ok, end, wall_s, folder, detail }
}

pub(super) fn options(dir: &Path, mode: Mode, model: &str, planner: PlannerInfo) -> RunOptions {
    let mut o = RunOptions::new(dir);
    o.mode = mode;
    o.model = model.into();
    o.planner = Some(planner);
    o
}

/// A run of a client in the process (the scripted one, or the classical rules).
fn plain(
    sc: &Scenario,
    table: &CostTable,
    dir: &Path,
    mode: Mode,
    c: &dyn Client,
    provider: &str,
) -> Result<RunOutcome, String> {
    let model = if mode == Mode::Classical { "none" } else { c.name() };
    let opts = options(dir, mode, model, PlannerInfo::of(mode, c.name(), provider, 0.0));
    let planner = if mode == Mode::Classical { Planner::Classical } else { Planner::Model(c) };
    run_scenario(sc, &opts, planner, table.clone()).map_err(|e| format!("{e:#}"))
}

/// A run of the real model client of `provider` against the stub model server in the process.
fn through_stub(sc: &Scenario, table: &CostTable, dir: &Path, provider: &str) -> Result<RunOutcome, String> {
    let script: Script = serde_json::from_value(json!({"then": "scripted"})).map_err(|e| e.to_string())?;
    let server = stub::start(script, None, 0).map_err(|e| format!("the stub server: {e}"))?;
    let base = if provider == "openai" { format!("{}/v1", server.url()) } else { server.url() };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let file = dir.join(format!("smoke-{provider}.toml"));
    let text = format!(
        "provider = \"{provider}\"\nmodel = \"stub-model\"\nbase_url = \"{base}\"\n\
         description = \"planners --smoke: the stub model server\"\n\
         [prices]\ninput = 1.0\noutput = 4.0\n[price_source]\nsource = \"the stub\"\ndate = \"2026-12-01\"\n"
    );
    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    let r = resolve(&file.display().to_string(), dir).map_err(|e| e.to_string())?;
    let c = client(&r, &ClientOptions::default())?;
    let mut opts =
        options(dir, Mode::Checked, &r.name, PlannerInfo::of(Mode::Checked, &r.name, provider, 0.0));
    opts.model_file = Some(file.display().to_string());
    opts.call_s = r.config.call_timeout_s;
    opts.wake_s = r.config.wake_timeout_s;
    let out =
        run_scenario(sc, &opts, Planner::Model(c.as_ref()), table.clone()).map_err(|e| format!("{e:#}"));
    drop(server);
    out
}

/// A run through the line protocol face on a Unix socket, played by the scripted brain.
fn through_line(sc: &Scenario, table: &CostTable, dir: &Path) -> Result<RunOutcome, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let socket = dir.join("agent.sock");
    let name = "smoke-line";
    let mut info = PlannerInfo::of(Mode::Checked, name, "agent", 0.0);
    info.kind = crate::runfolder::kinds::PlannerKind::Agent;
    info.face = Some(crate::runfolder::kinds::AgentFace::Line);
    info.options = serde_json::Map::from_iter([("agent_name".to_string(), json!(name))]);
    let opts = options(dir, Mode::Checked, name, info);
    let tools = crate::tools::tools_for(opts.mode, opts.profile, opts.operator);
    let frames = dir.join(crate::runfolder::folder_name(&sc.id, opts.mode.as_str(), name)).join("frames");
    let listener = bind(&socket).map_err(|e| format!("{}: cannot listen: {e}", socket.display()))?;
    let run = AgentRun { scenario: sc.clone(), opts, table: table.clone(), connect_s: 30.0 };
    let (port, handle) = start(run);
    let face = LineFace::new(port, tools.iter().map(|t| t.name.clone()).collect(), frames);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("the async runtime: {e}"))?;
    let sock = socket.clone();
    let server = std::thread::spawn(move || rt.block_on(serve(face, listener, &sock, 1.0)));
    let played = play(&socket, &tools);
    let outcome = handle.join().map_err(|_| "the run's thread panicked".to_string())?;
    let served = server.join().map_err(|_| "the server's thread panicked".to_string())?;
    played?;
    served.map_err(|e| format!("the socket: {e}"))?;
    outcome.map_err(|e| format!("{e:#}"))
}

/// The scripted agent: plays the run through the socket until it has ended.
fn play(socket: &Path, tools: &[crate::runfolder::rows::ToolDef]) -> Result<(), String> {
    let ask = |cmd: &LineCommand| request(socket, cmd).map_err(|e| format!("{}: {e}", socket.display()));
    let mut brain = ScriptedSession::new(0.0, tools);
    let mut report = |_| {};
    let mut ctx = CallCtx { limit_s: f64::INFINITY, report: &mut report };
    loop {
        let w = ask(&LineCommand::Wait {})?;
        if w["phase"] == "ended" {
            return Ok(());
        }
        let Some(text) = w["wake"].as_str() else { return Err(format!("wait answered {w}")) };
        let mut blocks = vec![Block::Text(text.to_string())];
        loop {
            let reply = brain.send(&blocks, &mut ctx).map_err(|e| e.to_string())?;
            if reply.tool_calls.is_empty() {
                break;
            }
            blocks.clear();
            for call in reply.tool_calls {
                let r = ask(&LineCommand::Send { tool: call.name.clone(), arguments: call.arguments })?;
                if r["phase"] == "ended" {
                    return Ok(());
                }
                let content = match r.get("result") {
                    Some(v) if !v.is_null() => v.to_string(),
                    _ => json!({"error": r["error"].clone()}).to_string(),
                };
                let is_error = r["ok"] != Value::Bool(true);
                blocks.push(Block::ToolResult { call_id: call.id, content, is_error });
            }
        }
    }
}
