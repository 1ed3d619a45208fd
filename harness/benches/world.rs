//! World speed: mission seconds per wall second while scouting a field with the LiDAR on (10 Hz
//! sweeps, each reduced by the scan function for the shield), with a person and a tractor near
//! the loop. Prints the figure and its ratio to the 1000× target.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use acres_core::objects::{Object, ObjectKind};
use acres_core::{ObjectAction, ObjectEvent, ObjectWhen, WorldConfig};
use acres_farm::geom::Pose;
use acres_farm::{Condition, Map};
use acres_harness::world::sim::CoreSim;
use acres_vehicle::{ServerOptions, SkillKind, SkillRequest};

fn main() {
    let map = Arc::new(
        Map::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/maps/default.json")).unwrap(),
    );
    let f = &map.fields["F57"];
    let entry = f.entry_pos;
    let near = |k: usize, dx: f64| {
        let p = f.scout_loop[k];
        Pose { x: p.x + dx, y: p.y + 12.0, yaw: 0.3 }
    };
    let mut best = f64::INFINITY;
    let mut sim_s = 0.0;
    let mut sweeps = 0;
    for _ in 0..3 {
        let start = Pose { x: entry.x, y: entry.y, yaw: std::f64::consts::FRAC_PI_2 };
        let mut sim = CoreSim::new(
            WorldConfig::new(map.clone(), Condition::Dry, start),
            ServerOptions::new(Condition::Dry.speed_limits()),
        );
        sim.world.schedule([
            ObjectEvent {
                when: ObjectWhen::At(0.0),
                action: ObjectAction::Add(Object { id: 1, kind: ObjectKind::Person, pose: near(1, 15.0) }),
            },
            ObjectEvent {
                when: ObjectWhen::At(0.0),
                action: ObjectAction::Add(Object { id: 2, kind: ObjectKind::Tractor, pose: near(2, -20.0) }),
            },
        ]);
        assert!(sim.request(&SkillRequest::new(SkillKind::Scout).field("F57")).accepted);
        let t0 = Instant::now();
        'run: loop {
            sim.step();
            for e in sim.drain_events() {
                if e.name == acres_vehicle::EventName::SkillEnded {
                    break 'run;
                }
            }
        }
        let wall = t0.elapsed().as_secs_f64();
        best = best.min(wall);
        sim_s = sim.world.t_s();
        sweeps = sim.scans();
    }
    let ratio = sim_s / best;
    println!("world: scout of F57 with the LiDAR on: {sim_s:.1} mission s, {sweeps} sweeps+scans, best wall {:.1} ms", best * 1e3);
    println!("world: {ratio:.0} mission s per wall s ({:.1}x the 1000x target)", ratio / 1000.0);
    println!("world: {:.1} us per sweep-and-scan step pair", best * 1e6 / sweeps as f64);
}
