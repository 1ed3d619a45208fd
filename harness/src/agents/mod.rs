//! External agents as planners: a coding agent or an agent framework of its own takes the
//! planner's seat through a face, and its run is scored like a model's.
//!
//! - [`session`]: the bridge between the loop and a face: an agent's calls become the replies of
//!   a model session; the thinking-time rule and the phases are stated there.
//! - [`mcp`]: the MCP server face (`acres-harness mcp`), stdio or streamable HTTP on 127.0.0.1.
//! - [`line`]: the line protocol face (`acres-harness agent serve`) on a Unix socket.
//! - [`proxy`]: the metering model proxy (`acres-harness proxy`): the agent's own model calls,
//!   relayed to its service, metered into the run folder (`proxy.jsonl`).
//! - [`plugins`]: every planner with an availability probe, and a smoke run of each
//!   (`acres-harness planners [--smoke]`).
//!
//! A face runs the loop in a thread of its own ([`start`]) and answers the agent from the
//! [`session::AgentPort`]. Safety is the loop's: a dispatch goes through the plan checker
//! (checked mode), the trajectory checker and the shield, and the limits of the scenario apply.

pub mod line;
pub mod mcp;
pub mod plugins;
pub mod proxy;
pub mod session;

use std::thread::JoinHandle;

use crate::planners::planning::costs::CostTable;
use crate::run::{run_scenario, Planner, RunOptions, RunOutcome};
use crate::runfolder::rows::EndCode;
use crate::scenario::Scenario;
use session::AgentPort;

/// What an agent's run is made of.
pub struct AgentRun {
    /// The scenario.
    pub scenario: Scenario,
    /// The run options (`model` is the agent's name).
    pub opts: RunOptions,
    /// The cost table of the scenario's map and condition.
    pub table: CostTable,
    /// How long the run waits for the agent to take its start wake-up, s.
    pub connect_s: f64,
}

/// Starts the run in a thread; the port is the faces' side. The thread marks the run ended when
/// it is over (a run that could not start ends `model_error`).
pub fn start(run: AgentRun) -> (AgentPort, JoinHandle<anyhow::Result<RunOutcome>>) {
    let (client, port) = session::agent(&run.opts.model, run.connect_s);
    let ender = port.ender();
    let handle = std::thread::Builder::new()
        .name("agent-run".into())
        .spawn(move || {
            let out = run_scenario(&run.scenario, &run.opts, Planner::Model(&client), run.table);
            match &out {
                Ok(o) => ender.set_ended(o.end, o.success),
                Err(_) => ender.set_ended(EndCode::ModelError, false),
            }
            out
        })
        .expect("a thread starts");
    (port, handle)
}

/// The tools that change nothing (`--read-only` registers only these and `wait_for_wake`).
pub const READ_ONLY_TOOLS: [&str; 2] = ["look", "read"];
