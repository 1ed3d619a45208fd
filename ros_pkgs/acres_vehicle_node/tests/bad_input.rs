//! The vehicle node's bad input: a missing or unreadable scenario exits 2 naming the problem,
//! before the node makes any DDS participant (so this needs no network namespace). Its runs with
//! every kind of local planner, a process plugin among them, are DDS tests (`bridge/node/tests/
//! link_sim.rs`, `acres_vehicle/tests/skills_over_dds.rs`); this test also makes
//! `cargo test --workspace` build the executable those tests start.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the node with `-p` parameters; its exit code and standard error.
fn node(params: &[String]) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acres_vehicle_node"));
    cmd.arg("--ros-args");
    for p in params {
        cmd.args(["-p", p]);
    }
    let out = cmd.output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn no_scenario_exits_2_naming_the_parameter() {
    let (code, err) = node(&[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("parameter scenario is required"), "{err}");
}

#[test]
fn a_scenario_that_does_not_exist_exits_2_naming_the_file() {
    let missing = repo().join("scenarios/no_such_scenario.json");
    let (code, err) = node(&[format!("scenario:={}", missing.display())]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no_such_scenario.json"), "{err}");
}

#[test]
fn a_scenario_with_an_unknown_local_planner_exits_2_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("acres-vehicle-node-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sc = dir.join("bad_planner.json");
    let text = std::fs::read_to_string(repo().join("scenarios/local_planners/python_plugin_one_field.json"))
        .unwrap()
        .replace("process:python3 ../../examples/local_planner_plugin.py", "no_such_planner");
    std::fs::write(&sc, text).unwrap();
    let (code, err) = node(&[
        format!("scenario:={}", sc.display()),
        format!("maps_dir:={}", repo().join("scenarios/maps").display()),
    ]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("local_planner"), "{err}");
}
