//! The skill server's link hold on ACRES Core (no ROS): a held motion stands still and does not
//! end, a release lets it go on to success with `link_release` giving the held time, a wait's
//! end moves on by the hold, and a skill that ends held closes its hold.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use acres_core::{Command as Drive, World, WorldConfig};
use acres_farm::{Condition, Map, Pose};
use acres_vehicle::scan::{scan, ScanConfig};
use acres_vehicle::{
    EventDetail, EventName, Observation, ResultCode, ServerOptions, SkillEvent, SkillKind, SkillRequest,
    SkillServer,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Rig {
    world: World,
    server: SkillServer,
    events: Vec<SkillEvent>,
}

impl Rig {
    fn new() -> Rig {
        let map = Arc::new(Map::load(&repo().join("scenarios/maps/default.json")).unwrap());
        let world = World::new(WorldConfig::new(map.clone(), Condition::Dry, Pose::default()));
        let server = SkillServer::new(map, ServerOptions::new(Condition::Dry.speed_limits()));
        Rig { world, server, events: Vec::new() }
    }

    fn obs(&self) -> Observation {
        let o = self.world.odometry();
        Observation { t_s: o.t_s, pose: o.pose, speed_mps: o.speed_mps }
    }

    /// One control step and one world step.
    fn step(&mut self) {
        let t = self.server.control(&self.obs());
        if self.world.step(Drive { speed_mps: t.speed_mps, yaw_rate_rps: t.yaw_rate_rps }).sweep {
            self.server.on_scan(scan(&self.world.sweep().points, &ScanConfig::default()).ahead_m);
        }
        self.events.extend(self.server.drain_events());
    }

    fn steps_for(&mut self, s: f64) {
        let until = self.obs().t_s + s;
        while self.obs().t_s < until {
            self.step();
        }
    }

    fn ended(&self) -> Option<&SkillEvent> {
        self.events.iter().find(|e| e.name == EventName::SkillEnded)
    }
}

#[test]
fn a_held_goto_stands_then_goes_on_to_success() {
    let mut r = Rig::new();
    let obs = r.obs();
    assert!(r.server.request(&SkillRequest::new(SkillKind::Goto).field("F54"), &obs).accepted);
    r.steps_for(8.0);
    assert!(r.obs().speed_mps > 2.0, "driving: {}", r.obs().speed_mps);
    let t0 = r.obs().t_s;
    assert!(r.server.link_hold("no heartbeat for 1.0 s".into(), t0));
    assert!(!r.server.link_hold("again".into(), t0), "one hold at a time");
    r.steps_for(200.0); // far past stall_s and blocked_s: held, not ended
    assert!(r.ended().is_none(), "a held skill does not end: {:?}", r.ended());
    assert!(r.obs().speed_mps.abs() < 0.01, "standstill: {}", r.obs().speed_mps);
    let held = r.server.link_release(r.obs().t_s).expect("held");
    r.events.extend(r.server.drain_events());
    assert!((held - 200.0).abs() < 0.2, "held {held} s");
    let rel = r.events.iter().find(|e| e.name == EventName::LinkRelease).expect("link_release");
    assert!(
        matches!(&rel.detail, EventDetail::Release { held_s, why: Some(w), .. } if (*held_s - held).abs() < 1e-9 && w == "heartbeats returned")
    );
    assert!(r
        .events
        .iter()
        .any(|e| e.name == EventName::LinkHold && e.cause.as_deref() == Some("no heartbeat for 1.0 s")));
    for _ in 0..40_000 {
        if r.ended().is_some() {
            break;
        }
        r.step();
    }
    let end = r.ended().expect("the goto ends");
    assert_eq!(end.code, Some(ResultCode::Succeeded), "{end:?}");
    assert!(!r.server.link_held());
}

#[test]
fn a_wait_held_ends_later_by_the_hold() {
    let mut r = Rig::new();
    let obs = r.obs();
    let t0 = obs.t_s;
    assert!(r.server.request(&SkillRequest::new(SkillKind::Wait).seconds(5.0), &obs).accepted);
    r.steps_for(2.0);
    r.server.link_hold("no heartbeat".into(), r.obs().t_s);
    r.steps_for(3.0);
    r.server.link_release(r.obs().t_s);
    while r.ended().is_none() {
        r.step();
    }
    let end = r.ended().unwrap();
    assert_eq!(end.code, Some(ResultCode::Succeeded));
    let waited = end.t_s - t0;
    assert!((7.9..=8.2).contains(&waited), "5 s of wait + 3 s held: {waited}");
}

#[test]
fn a_skill_that_ends_held_closes_its_hold() {
    let mut r = Rig::new();
    let obs = r.obs();
    assert!(r.server.request(&SkillRequest::new(SkillKind::Goto).field("F54"), &obs).accepted);
    r.steps_for(3.0);
    r.server.link_hold("no heartbeat".into(), r.obs().t_s);
    r.steps_for(1.0);
    assert!(r.server.end_running(ResultCode::Stopped, "heartbeat lost for 3.0 s".into(), r.obs().t_s));
    r.events.extend(r.server.drain_events());
    let names: Vec<_> = r.events.iter().map(|e| e.name).collect();
    let rel = names.iter().position(|n| *n == EventName::LinkRelease).expect("link_release");
    let end = names.iter().position(|n| *n == EventName::SkillEnded).expect("skill_ended");
    assert!(rel < end, "{names:?}");
    assert!(
        matches!(&r.events[rel].detail, EventDetail::Release { why: Some(w), .. } if w == "the skill ended")
    );
    assert!(!r.server.link_held());
    assert_eq!(r.server.link_release(r.obs().t_s), None, "nothing held");
}
