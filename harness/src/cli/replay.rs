//! `acres-harness replay FOLDER`: runs a recorded run again with its recorded replies and
//! latencies, with no model call, and compares the world digest with the recorded one (exit 0
//! only when they are equal). A link run (`--world link`) is not re-run: replay says what its
//! folder proves and what it cannot (exit 1).

use std::path::PathBuf;

use clap::Args;

use super::{maps_dir, Failure};
use crate::planners::replay::{Recorded, ReplayClient};
use crate::planners::{CallEvent, ModelError, Reply};
use crate::run::{run_scenario, Planner, RunOptions};
use crate::runfolder::rows::{EndCode, EndRow, Mode, Row, RunRow};
use crate::scenario;

/// Options of `replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// The run folder to replay.
    pub folder: PathBuf,
    /// Where to write the replayed run folder (default: a folder in the system's temp folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Reads the rows a replay needs from `folder`'s `run.jsonl`.
fn read_recording(folder: &std::path::Path) -> Result<Recording, Failure> {
    let file = folder.join(crate::runfolder::RUN_FILE);
    let text =
        std::fs::read_to_string(&file).map_err(|e| Failure::input(format!("{}: {e}", file.display())))?;
    let mut run_row = None;
    let mut recorded = Vec::new();
    let mut events = Vec::new();
    let mut end = None;
    for (i, line) in text.lines().enumerate() {
        let row =
            Row::decode(line).map_err(|e| Failure::input(format!("{}:{}: {e}", file.display(), i + 1)))?;
        match row {
            Row::Run(r) => run_row = Some(r),
            Row::ModelRetry(r) => {
                events.push(CallEvent::Retry { try_n: r.try_n, wait_s: r.wait_s, cause: r.cause })
            }
            Row::ModelWait(r) => events.push(CallEvent::Wait { wait_s: r.wait_s, cause: r.cause }),
            Row::ModelReply(r) => recorded.push(Recorded::Reply {
                reply: Reply {
                    text: r.text,
                    reasoning: r.reasoning,
                    reasoning_hidden: r.reasoning_hidden,
                    tool_calls: r.tool_calls,
                    stop: r.stop,
                    usage: r.usage,
                    latency_s: r.latency_s,
                    repairs: r.repairs,
                    cached: r.cached,
                },
                usd: r.usd,
                events: std::mem::take(&mut events),
            }),
            // A session that did not start has call 0: it is not a call to play back.
            Row::ModelError(r) if r.call > 0 => recorded.push(Recorded::Error {
                error: ModelError {
                    kind: r.kind,
                    message: r.error,
                    latency_s: r.latency_s,
                    repairs: r.repairs,
                },
                events: std::mem::take(&mut events),
            }),
            Row::End(e) => end = Some(e),
            _ => {}
        }
    }
    let run_row = run_row.ok_or_else(|| Failure::input(format!("{}: no run row", file.display())))?;
    let end = end.ok_or_else(|| {
        Failure::input(format!("{}: the run is incomplete (no end row); nothing to compare", file.display()))
    })?;
    Ok(Recording { run_row, recorded, end })
}

/// What a run folder recorded for its replay: the run row, the model calls in order, the end.
struct Recording {
    run_row: RunRow,
    recorded: Vec<Recorded>,
    end: EndRow,
}

/// Runs the command.
pub fn run(a: ReplayArgs) -> Result<(), Failure> {
    let Recording { run_row, recorded, end } = read_recording(&a.folder)?;
    if run_row.world == crate::runfolder::rows::World::Link {
        // A real world (the vehicle over the link) is not replayed bit for bit: say what can be
        // shown and what cannot, and compare nothing.
        println!(
            "replay of {}: a link run (world link, end {}). What the folder proves: the rows are the \
             recorded conversation (the planner's calls, the tools' results, the skill server's events, \
             the vehicle's poses as observed over the link) and `validate` checks their contract. What it \
             cannot prove: that running again gives the same world. The vehicle (simulated or real) ran in \
             other processes on its own clock; its digest ({}) only identifies what came over the link. \
             Nothing was re-run.",
            a.folder.display(),
            end.end,
            end.digest
        );
        return Err(Failure::check("replay: a link run cannot be replayed bit for bit (see above)"));
    }
    let n_calls = recorded.len() as u64;
    let sc_file = PathBuf::from(&run_row.scenario_file);
    let sc = scenario::load(&sc_file, &maps_dir(std::slice::from_ref(&sc_file)))
        .map_err(|e| Failure::input(e.to_string()))?;
    let recovery_mode = Some(run_row.recovery.mode);
    let recovery_options = vec![("hold_s".to_string(), run_row.recovery.hold_s.to_string())];
    let out =
        a.out.unwrap_or_else(|| std::env::temp_dir().join(format!("acres-replay-{}", std::process::id())));
    let opts = RunOptions {
        mode: run_row.mode,
        profile: run_row.profile,
        pace: 0.0,
        operator: run_row.tools.iter().any(|t| t.name == "ask_operator"),
        out,
        seed: run_row.identity.seed,
        recovery_mode,
        recovery_options,
        model: run_row.model.clone(),
        model_file: run_row.model_file.clone(),
        // The recorded limits: the model file's call limits as they were applied.
        call_s: Some(run_row.limits.call_s),
        wake_s: Some(run_row.limits.wake_s),
        calls_per_run: (end.end == EndCode::LimitModelCalls).then_some(n_calls),
        secret_vars: Vec::new(),
        record: run_row.record,
        link: None,
        // The recorded planner's calls are re-run: the run row says which planner they were.
        planner: run_row.planner.clone(),
        // The verdicts the recorded run was started with, written again as they were.
        probe: run_row.serving.as_ref().and_then(|s| s.probe.clone()),
    };
    let table = crate::planners::planning::costs::CostTable::load(
        &super::run::costs_dir(),
        &sc.map_data.name,
        sc.condition.as_str(),
    )
    .map_err(|e| Failure::input(e.to_string()))?;
    let client = ReplayClient::new(&run_row.model, recorded).budget_at_end(end.end == EndCode::Budget);
    let planner = if run_row.mode == Mode::Classical { Planner::Classical } else { Planner::Model(&client) };
    let outcome = run_scenario(&sc, &opts, planner, table)?;
    println!(
        "replay of {}: recorded digest {} end {}, replayed digest {} end {} ({} recorded calls unused) -> {}",
        a.folder.display(),
        end.digest,
        end.end,
        outcome.digest,
        outcome.end,
        client.remaining(),
        outcome.folder.display()
    );
    if outcome.digest != end.digest {
        return Err(Failure::check("replay: the world differs from the recorded world"));
    }
    println!("replay: the world equals the recorded world");
    Ok(())
}
