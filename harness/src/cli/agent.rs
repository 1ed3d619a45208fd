//! `acres-harness agent`: the line protocol face of a run with an external agent (see
//! [`crate::agents::line`]). `serve` runs the scenario and listens on a Unix socket (its path is
//! the first line on stdout); `send`, `wait`, `status` and `end` each send one command and print
//! the one JSON line of the reply: exit 0 when `ok`, 1 when not, 2 when the server cannot be
//! reached or the command is malformed.
//!
//! ```text
//! acres-harness agent serve --scenario scenarios/t1_01_one_field.json --out runs/a --agent-name sh --socket /tmp/acres.sock &
//! acres-harness agent wait --socket /tmp/acres.sock
//! acres-harness agent send plan '{"visits": ["F53"]}' --socket /tmp/acres.sock
//! acres-harness agent send dispatch '{"skill": "goto", "arguments": {"field": "F53"}}'
//! acres-harness agent status
//! acres-harness agent end
//! ```

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::Value;

use super::mcp::{finish, prepare, runtime, AgentRunArgs};
use super::Failure;
use crate::agents::line::{bind, request, serve, LineCommand, LineFace};

/// The socket's environment variable.
pub const SOCKET_ENV: &str = "ACRES_AGENT_SOCKET";

/// The socket of the commands.
#[derive(Debug, Clone, Args)]
pub struct SocketArg {
    /// The Unix socket of the run.
    #[arg(long, env = SOCKET_ENV, default_value = "/tmp/acres-agent.sock")]
    pub socket: PathBuf,
}

/// The `agent` commands.
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Runs one scenario and serves the line protocol on a Unix socket.
    Serve {
        /// The run.
        #[command(flatten)]
        run: Box<AgentRunArgs>,
        /// The socket.
        #[command(flatten)]
        socket: SocketArg,
        /// How long the server stays up after the run has ended, s.
        #[arg(long, default_value_t = 10.0)]
        linger_s: f64,
    },
    /// Runs one tool: `agent send TOOL [JSON]`.
    Send {
        /// The tool.
        tool: String,
        /// Its arguments, one JSON object (default `{}`).
        #[arg(default_value = "{}")]
        arguments: String,
        /// The socket.
        #[command(flatten)]
        socket: SocketArg,
    },
    /// Ends the turn and waits for the next wake-up.
    Wait(SocketArg),
    /// Prints the run's status.
    Status(SocketArg),
    /// Ends the run the normal way (every later wake-up ends the turn) and prints the end.
    End(SocketArg),
}

/// Runs an `agent` command.
pub fn run(cmd: AgentCommand) -> Result<(), Failure> {
    let (socket, line) = match cmd {
        AgentCommand::Serve { run, socket, linger_s } => return serve_run(&run, &socket.socket, linger_s),
        AgentCommand::Send { tool, arguments, socket } => {
            let arguments: Value = serde_json::from_str(&arguments)
                .map_err(|e| Failure::input(format!("agent send {tool}: the arguments are not JSON: {e}")))?;
            if !arguments.is_object() {
                return Err(Failure::input(format!(
                    "agent send {tool}: the arguments must be one JSON object"
                )));
            }
            (socket, LineCommand::Send { tool, arguments })
        }
        AgentCommand::Wait(s) => (s, LineCommand::Wait {}),
        AgentCommand::Status(s) => (s, LineCommand::Status {}),
        AgentCommand::End(s) => (s, LineCommand::End {}),
    };
    let reply = request(&socket.socket, &line)
        .map_err(|e| Failure::env(format!("{}: no agent server answers: {e}", socket.socket.display())))?;
    println!("{reply}");
    if reply["ok"] != Value::Bool(true) {
        return Err(Failure::check("the reply is not ok"));
    }
    Ok(())
}

fn serve_run(a: &AgentRunArgs, socket: &std::path::Path, linger_s: f64) -> Result<(), Failure> {
    let p = prepare(a, crate::runfolder::kinds::AgentFace::Line)?;
    let frames = p
        .run
        .opts
        .out
        .join(crate::runfolder::folder_name(&p.run.scenario.id, p.run.opts.mode.as_str(), &p.run.opts.model))
        .join("frames");
    let frames = std::path::absolute(&frames).unwrap_or(frames);
    let rt = runtime()?;
    let tools: Vec<String> = p.tools.iter().map(|t| t.name.clone()).collect();
    let listener =
        bind(socket).map_err(|e| Failure::env(format!("{}: cannot listen: {e}", socket.display())))?;
    let (port, handle) = crate::agents::start(p.run);
    let face = LineFace::new(port, tools, frames);
    println!("{}", socket.display());
    let _ = std::io::stdout().flush();
    let served = rt
        .block_on(serve(face, listener, socket, linger_s))
        .map_err(|e| Failure::input(format!("{}: cannot serve: {e}", socket.display())));
    let outcome = handle.join().map_err(|_| Failure::env("the run's thread panicked"))?;
    served?;
    finish(outcome)
}
