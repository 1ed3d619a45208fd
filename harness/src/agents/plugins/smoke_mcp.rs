//! The MCP face's smoke run: the face's real server (rmcp) on an in-process pipe, spoken to as
//! over stdio (newline-delimited JSON-RPC: `initialize`, `notifications/initialized`,
//! `tools/list`, `tools/call`), played by the scripted planner's session. No Python, no network.

use std::path::Path;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

use super::smoke::options;
use crate::agents::mcp::{McpFace, RMCP_VERSION};
use crate::agents::{start, AgentRun};
use crate::planners::planning::costs::CostTable;
use crate::planners::scripted::ScriptedSession;
use crate::planners::{Block, CallCtx, Session};
use crate::run::{system_text, RunOutcome};
use crate::runfolder::rows::{Mode, PlannerInfo, ToolDef};
use crate::scenario::Scenario;

/// The agent's name in the run folder.
const NAME: &str = "smoke-mcp";

/// The JSON-RPC protocol version the client asks for (the face answers with its own).
const PROTOCOL: &str = "2025-06-18";

/// A run through the MCP face, played by the scripted brain as an MCP client.
pub(super) fn through_mcp(sc: &Scenario, table: &CostTable, dir: &Path) -> Result<RunOutcome, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut info = PlannerInfo::of(Mode::Checked, NAME, "agent", 0.0);
    info.kind = crate::runfolder::kinds::PlannerKind::Agent;
    info.face = Some(crate::runfolder::kinds::AgentFace::McpStdio);
    info.options = serde_json::Map::from_iter([("agent_name".to_string(), json!(NAME))]);
    info.versions.insert("rmcp".into(), json!(RMCP_VERSION));
    let opts = options(dir, Mode::Checked, NAME, info);
    let tools = crate::tools::tools_for(opts.mode, opts.profile, opts.operator);
    let instructions = system_text(sc, opts.mode, opts.profile);
    let run = AgentRun { scenario: sc.clone(), opts, table: table.clone(), connect_s: 30.0 };
    let (port, handle) = start(run);
    let face = McpFace::new(port, &tools, &instructions);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("the async runtime: {e}"))?;
    let played = rt.block_on(async move {
        let (client, server) = tokio::io::duplex(1 << 20);
        let served = tokio::spawn(async move {
            use rmcp::ServiceExt;
            let running = face.serve(tokio::io::split(server)).await.map_err(|e| e.to_string())?;
            running.waiting().await.map_err(|e| e.to_string()).map(|_| ())
        });
        let played = play(client, &tools).await;
        let served = served.await.map_err(|e| e.to_string()).and_then(|r| r);
        played.and(served.map_err(|e| format!("the MCP server: {e}")))
    });
    let outcome = handle.join().map_err(|_| "the run's thread panicked".to_string())?;
    played?;
    outcome.map_err(|e| format!("{e:#}"))
}

/// A JSON-RPC client on one pipe: requests with ids, answers matched by id (notifications the
/// server sends in between, e.g. progress, are passed over).
struct Rpc {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    out: WriteHalf<DuplexStream>,
    id: u64,
}

impl Rpc {
    async fn send(&mut self, v: Value) -> Result<(), String> {
        let mut line = v.to_string();
        line.push('\n');
        self.out.write_all(line.as_bytes()).await.map_err(|e| format!("the pipe: {e}"))
    }

    async fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.id += 1;
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        loop {
            let line = self.lines.next_line().await.map_err(|e| format!("the pipe: {e}"))?;
            let line = line.ok_or_else(|| format!("{method}: the server closed the pipe"))?;
            let v: Value = serde_json::from_str(&line).map_err(|e| format!("{method}: {e}: {line}"))?;
            if v["id"] != json!(id) {
                continue;
            }
            if let Some(e) = v.get("error") {
                return Err(format!("{method}: {e}"));
            }
            return Ok(v["result"].clone());
        }
    }
}

/// The text of a `tools/call` result's first content block.
fn text_of(result: &Value) -> Result<String, String> {
    let first = result["content"].as_array().and_then(|c| c.iter().find(|b| b["type"] == "text"));
    first.and_then(|b| b["text"].as_str()).map(str::to_string).ok_or_else(|| format!("no text in {result}"))
}

/// An answer that says the run has ended (every tool says so after the end).
fn ended(result: &Value, text: &str) -> bool {
    result["isError"] == Value::Bool(true)
        && serde_json::from_str::<Value>(text).is_ok_and(|v| v["phase"] == "ended")
}

/// The scripted agent: initialize, then wait_for_wake and the brain's calls until the end.
async fn play(pipe: DuplexStream, tools: &[ToolDef]) -> Result<(), String> {
    let (read, out) = tokio::io::split(pipe);
    let mut rpc = Rpc { lines: BufReader::new(read).lines(), out, id: 0 };
    let client = json!({"name": "acres-planners-smoke", "version": crate::HARNESS_VERSION});
    rpc.call("initialize", json!({"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": client}))
        .await?;
    rpc.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
    let listed = rpc.call("tools/list", json!({})).await?;
    let n = listed["tools"].as_array().map_or(0, Vec::len);
    if n != tools.len() + 1 {
        return Err(format!(
            "tools/list gave {n} tools, expected the mode's {} and wait_for_wake",
            tools.len()
        ));
    }
    let mut brain = ScriptedSession::new(0.0, tools);
    let mut report = |_| {};
    let mut ctx = CallCtx { limit_s: f64::INFINITY, report: &mut report };
    loop {
        let w = rpc.call("tools/call", json!({"name": "wait_for_wake", "arguments": {}})).await?;
        let text = text_of(&w)?;
        if ended(&w, &text) {
            return Ok(());
        }
        let mut blocks = vec![Block::Text(text)];
        loop {
            let reply = brain.send(&blocks, &mut ctx).map_err(|e| e.to_string())?;
            if reply.tool_calls.is_empty() {
                break;
            }
            blocks.clear();
            for call in reply.tool_calls {
                let params = json!({"name": call.name, "arguments": call.arguments});
                let r = rpc.call("tools/call", params).await?;
                let content = text_of(&r)?;
                if ended(&r, &content) {
                    return Ok(());
                }
                let is_error = r["isError"] == Value::Bool(true);
                blocks.push(Block::ToolResult { call_id: call.id, content, is_error });
            }
        }
    }
}
