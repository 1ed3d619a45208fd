//! Interop with an independent DDS implementation: Eclipse Cyclone DDS (PyPI `cyclonedds`)
//! reads `/lidar/points`, `/odom` and `/acres/observation` under their ROS 2 names and decodes
//! them, and sends a goal to `/acres/skill` with rmw_cyclonedds's framing that the vehicle node
//! carries out to `succeeded`. Loopback only, inside a private network namespace.

mod util;

use std::process::Command;

use util::*;

/// Fails unless `python3` has `cyclonedds` (tools/test.sh installs it into .venv).
fn require_cyclone() {
    let ok = Command::new("python3").args(["-c", "import cyclonedds"]).status().is_ok_and(|s| s.success());
    assert!(ok, "python3 has no cyclonedds (tools/test.sh installs it into .venv)");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn cyclone_reads_the_topics_and_drives_a_goal_with_cyclone_framing() {
    require_netns();
    require_cyclone();
    let sc = scenario("t1_01_one_field");
    let _core = core_node(21, &sc, 40.0, &[]);
    let _veh = vehicle_node(21, &sc, &["rmw_framing:=cyclonedds"]);
    // The planner's side is alive (the deadman holds a goal without beats): RustDDS beats here.
    let _beats = Beater::start(21);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cyclone_interop.py");
    let out = Command::new("timeout")
        .args(["120", "python3"])
        .arg(&script)
        .args(["21", "goto", "F53", "90"])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cyclone script failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    eprintln!("cyclone report: {r}");
    let cloud = &r["cloud"];
    assert_eq!(cloud["frame"], "lidar");
    assert_eq!(cloud["fields"], serde_json::json!(["x", "y", "z", "intensity"]));
    assert_eq!(cloud["point_step"], 16);
    let n = cloud["points"].as_u64().expect("points");
    assert!(n > 1000, "a multi-ring sweep: {n} points");
    assert_eq!(cloud["bytes"].as_u64(), Some(16 * n));
    assert_eq!((r["odom"]["frame"].as_str(), r["odom"]["child"].as_str()), (Some("odom"), Some("base_link")));
    assert!(r["observation"]["state"].is_string(), "observation decoded: {r}");
    assert_eq!(r["accepted"], true, "the goal is accepted: {r}");
    assert_eq!(r["result"]["status"], 4, "GoalStatus SUCCEEDED: {r}");
    assert_eq!(r["result"]["code"], "succeeded");
}
