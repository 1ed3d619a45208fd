//! Local planners (`local_planner`): the in-tree `pure_pursuit` and the Python example plugin
//! run a mission to success through the binary, a plugin run replays to the same digest, and
//! each way a real plugin process fails (crash, hang past the budget, a malformed line, an
//! error answer) ends the motion `reactive_fault` with its cause and stops the vehicle; a run
//! whose plugin crashes still leaves a valid run folder.

mod support;
use support::{root, TempDir};

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use acres_farm::geom::Pose;
use acres_farm::{Condition, Map};
use acres_harness::world::sim::CoreSim;
use acres_local_planners::{ProcessConfig, ProcessFactory};
use acres_scenario::local_planner::LocalPlannerKey;
use acres_vehicle::{EventName, ResultCode, ServerOptions, SkillEvent, SkillKind, SkillRequest};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_acres-harness"))
}

/// Runs one scenario with the scripted planner; returns the run folder and the output.
fn run(scenario: &Path, out: &TempDir) -> (std::path::PathBuf, String) {
    let o =
        bin().args(["run", "--scenario"]).arg(scenario).args(["--out", &out.path("runs")]).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let dir = std::fs::read_dir(out.join("runs")).unwrap().next().unwrap().unwrap().path();
    (dir, text)
}

#[test]
fn pure_pursuit_drives_a_mission_to_success() {
    let out = TempDir::new("lp-pure-pursuit");
    let (_, text) = run(&root().join("scenarios/local_planners/pure_pursuit_one_field.json"), &out);
    assert!(text.contains("1 runs, 1 succeeded"), "{text}");
}

#[test]
fn the_python_plugin_drives_a_mission_to_success_and_replays_to_the_same_digest() {
    let out = TempDir::new("lp-python");
    let (dir, text) = run(&root().join("scenarios/local_planners/python_plugin_one_field.json"), &out);
    assert!(text.contains("1 runs, 1 succeeded"), "{text}");
    let o = bin().arg("replay").arg(&dir).args(["--out", &out.path("replay")]).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{said}");
    assert!(said.contains("the world equals the recorded world"), "{said}");
}

#[test]
fn a_run_whose_plugin_crashes_ends_and_its_run_folder_is_valid() {
    let out = TempDir::new("lp-crash-run");
    let sc = root().join("harness/tests/fixtures/local_planners/crash_one_field.json");
    let (dir, text) = run(&sc, &out);
    assert!(text.contains("1 runs, 0 succeeded"), "{text}");
    let rows = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    assert!(rows.contains("\"code\":\"reactive_fault\""), "no reactive_fault in the rows");
    assert!(rows.contains("local planner died (process:python3 faulty_plugin.py crash)"), "{rows:.2000}");
    let v = bin().arg("validate").arg(&dir).output().unwrap();
    assert!(
        v.status.success(),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
}

/// A world at home whose skill server drives with `faulty_plugin.py <mode>`.
fn sim_with_plugin(mode: &str, step_budget: Duration) -> CoreSim {
    let m = Arc::new(Map::load(&root().join("scenarios/maps/default.json")).unwrap());
    let world = acres_core::WorldConfig::new(m, Condition::Dry, Pose::default());
    let mut sim = CoreSim::new(world, ServerOptions::new(Condition::Dry.speed_limits()));
    let file = root().join("harness/tests/fixtures/local_planners/scenario.json");
    let spec = format!("process:python3 faulty_plugin.py {mode}");
    let LocalPlannerKey::Process(cmd) = LocalPlannerKey::check(&spec, &file).unwrap() else {
        panic!("a process spec")
    };
    let config = ProcessConfig { step_budget, ..ProcessConfig::default() };
    sim.server.set_local_planner(Arc::new(ProcessFactory::new(cmd, config)));
    sim
}

/// Starts a goto and steps until it ends; then steps 20 s more. Returns the end event and the
/// vehicle's speed at the end (m/s).
fn drive_until_fault(sim: &mut CoreSim) -> (SkillEvent, f64) {
    let r = sim.request(&SkillRequest::new(SkillKind::Goto).field("F53"));
    assert!(r.accepted, "{r:?}");
    let mut end = None;
    for _ in 0..400 {
        sim.step();
        if let Some(e) = sim.drain_events().into_iter().find(|e| e.name == EventName::SkillEnded) {
            end = Some(e);
            break;
        }
    }
    let end = end.expect("the motion ended");
    for _ in 0..400 {
        sim.step();
    }
    (end, sim.observation().speed_mps)
}

fn assert_fault(mode: &str, budget: Duration, kind: &str, cause_has: &str) {
    let mut sim = sim_with_plugin(mode, budget);
    let (end, speed_mps) = drive_until_fault(&mut sim);
    assert_eq!(end.code, Some(ResultCode::ReactiveFault), "{end:?}");
    let cause = end.cause.clone().unwrap_or_default();
    let head = format!("local planner {kind} (process:python3 faulty_plugin.py {mode}): ");
    assert!(cause.starts_with(&head), "{cause}");
    assert!(cause.contains(cause_has), "{cause}");
    // Six steps: five answered, the sixth faulted (the vehicle had started to move).
    assert!(end.t_s > 0.2 && end.t_s < 0.5, "{end:?}");
    assert!(speed_mps.abs() < 0.01, "the vehicle stopped: {speed_mps} m/s");
    assert!(!sim.server.busy());
}

#[test]
fn a_plugin_that_crashes_ends_the_motion_with_reactive_fault_died() {
    assert_fault("crash", Duration::from_millis(2000), "died", "exit status: 3) at step 6");
}

#[test]
fn a_plugin_that_hangs_past_the_budget_ends_the_motion_with_reactive_fault_timeout() {
    assert_fault("hang", Duration::from_millis(300), "timeout", "no answer to step 6 within 300 ms");
}

#[test]
fn a_plugin_that_writes_a_malformed_line_ends_the_motion_with_reactive_fault_malformed() {
    assert_fault("malformed", Duration::from_millis(2000), "malformed", "step 6: expected value");
}

#[test]
fn a_plugin_that_answers_an_error_ends_the_motion_with_reactive_fault_refused() {
    assert_fault("refuse", Duration::from_millis(2000), "refused", "step 6: no idea where to go");
}

#[test]
fn after_a_fault_the_next_motion_starts_the_plugin_again() {
    let mut sim = sim_with_plugin("crash", Duration::from_millis(2000));
    let (first, _) = drive_until_fault(&mut sim);
    let (second, _) = drive_until_fault(&mut sim);
    assert_eq!(second.code, Some(ResultCode::ReactiveFault));
    // The new process answered five steps again before it crashed.
    assert!(second.cause.unwrap().contains("at step 6"), "{first:?}");
}
