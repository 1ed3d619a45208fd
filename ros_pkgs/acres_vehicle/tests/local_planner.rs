//! The local planners of the vehicle library: `pure_pursuit` drives a whole mission on ACRES
//! Core (goto, scout, return home: each `succeeded`), and the vehicle node refuses a scenario
//! whose `local_planner` is a process plugin (exit 2, naming the key) before it makes any DDS
//! participant (so this needs no network namespace).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use acres_core::{Command as Drive, World, WorldConfig};
use acres_farm::{Condition, Map, Pose};
use acres_vehicle::local_planner::Builtin;
use acres_vehicle::scan::{scan, ScanConfig};
use acres_vehicle::{
    EventName, Observation, ResultCode, ServerOptions, SkillKind, SkillRequest, SkillServer,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `req` to its end on the world and server; returns its result code.
fn drive(world: &mut World, server: &mut SkillServer, req: SkillRequest) -> ResultCode {
    let cfg = ScanConfig::default();
    let o = world.odometry();
    let r = server.request(&req, &Observation { t_s: o.t_s, pose: o.pose, speed_mps: o.speed_mps });
    assert!(r.accepted, "{r:?}");
    for _ in 0..40_000 {
        let o = world.odometry();
        let t = server.control(&Observation { t_s: o.t_s, pose: o.pose, speed_mps: o.speed_mps });
        if world.step(Drive { speed_mps: t.speed_mps, yaw_rate_rps: t.yaw_rate_rps }).sweep {
            server.on_scan(scan(&world.sweep().points, &cfg).ahead_m);
        }
        if let Some(e) = server.drain_events().into_iter().find(|e| e.name == EventName::SkillEnded) {
            return e.code.expect("an end has a code");
        }
    }
    panic!("{req:?} did not end");
}

#[test]
fn pure_pursuit_drives_goto_scout_and_return_home_to_success() {
    let map = Arc::new(Map::load(&repo().join("scenarios/maps/default.json")).unwrap());
    let mut world = World::new(WorldConfig::new(map.clone(), Condition::Dry, Pose::default()));
    let mut server = SkillServer::new(map, ServerOptions::new(Condition::Dry.speed_limits()));
    server.set_local_planner(Builtin::PurePursuit.factory());
    assert_eq!(server.local_planner_name(), "pure_pursuit");
    for req in [
        SkillRequest::new(SkillKind::Goto).field("F54"),
        SkillRequest::new(SkillKind::Scout).field("F54"),
        SkillRequest::new(SkillKind::ReturnHome),
    ] {
        assert_eq!(drive(&mut world, &mut server, req.clone()), ResultCode::Succeeded, "{req:?}");
    }
    assert_eq!(server.status().scouted, vec!["F54".to_string()]);
}

#[test]
fn the_vehicle_node_refuses_a_process_plugin() {
    let scenario = repo().join("harness/tests/fixtures/local_planners/crash_one_field.json");
    let out = Command::new(env!("CARGO_BIN_EXE_acres_vehicle_node"))
        .arg("--ros-args")
        .arg("-p")
        .arg(format!("scenario:={}", scenario.display()))
        .arg("-p")
        .arg(format!("maps_dir:={}", repo().join("scenarios/maps").display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("at local_planner: the vehicle node runs the in-tree local planners only"), "{err}");
    assert!(err.contains("process:python3 faulty_plugin.py crash"), "{err}");
}
