//! The local planners of the vehicle library: `pure_pursuit` drives a whole mission on ACRES
//! Core (goto, scout, return home: each `succeeded`). The vehicle node with a process plugin is
//! tested over the link (`bridge/node/tests/link_sim.rs`).

use std::path::{Path, PathBuf};
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
