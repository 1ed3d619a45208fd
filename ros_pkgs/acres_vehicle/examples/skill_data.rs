//! Training data for a learned skill whose route is a Scout loop (`route.kind = "scout_loop"`):
//! drives ACRES Core (the simulated world the harness runs) with the built-in follower around
//! the Scout loops of the given fields at several speed caps, and prints one CSV row per control
//! step: the skill's observation vector (its `skill.toml`'s `observation`, computed by the same
//! code the skill server uses) and the follower's command (`cmd_speed_mps`, `cmd_yaw_rate_rps`).
//!
//! Some runs start off the route and drive with a seeded disturbance of the executed yaw rate,
//! while the row keeps the follower's own command: the policy also learns to come back.
//!
//! ```text
//! cargo run -p acres_vehicle --example skill_data -- scenarios/learned/edge_pass \
//!     scenarios/maps/default.json F51,F53,F56 0.8,1.2,1.6 > data.csv
//! ```

use std::path::Path;
use std::sync::Arc;

use acres_core::{Command, World, WorldConfig};
use acres_farm::geom::{Polyline, Pose, Vec2};
use acres_farm::route::scout_path;
use acres_farm::{Condition, Map};
use acres_vehicle::follower::{Follower, FollowerParams};
use acres_vehicle::learned::observe::{observe, ObsInput};
use acres_vehicle::learned::spec;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 4 {
        eprintln!("usage: skill_data SKILL_DIR MAP_FILE FIELDS(comma) CAPS_MPS(comma)");
        std::process::exit(2);
    }
    let toml_file = Path::new(&args[0]).join("skill.toml");
    let text = std::fs::read_to_string(&toml_file)
        .unwrap_or_else(|e| fail(&format!("{}: {e}", toml_file.display())));
    let spec = spec::parse(&text, &toml_file).unwrap_or_else(|e| fail(&e.to_string()));
    let map = Arc::new(Map::load(Path::new(&args[1])).unwrap_or_else(|e| fail(&e.to_string())));
    let caps: Vec<f64> =
        args[3].split(',').map(|c| c.parse().unwrap_or_else(|_| fail("a cap is not a number"))).collect();
    let names: Vec<&str> = spec.observation.iter().map(|o| o.as_str()).collect();
    println!("{},cmd_speed_mps,cmd_yaw_rate_rps", names.join(","));
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for field in args[2].split(',') {
        for &cap in &caps {
            for disturbed in [false, true] {
                drive(&map, field, cap, disturbed.then_some(&mut rng), &spec);
            }
        }
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("skill_data: {msg}");
    std::process::exit(2)
}

/// One drive around `field`'s loop at `cap`; with `rng`, from an offset start and with a
/// disturbed yaw rate.
fn drive(map: &Arc<Map>, field: &str, cap: f64, rng: Option<&mut u64>, spec: &spec::SkillSpec) {
    let f = map.fields.get(field).unwrap_or_else(|| fail(&format!("unknown field {field}")));
    let path = scout_path(map, field).unwrap_or_else(|| fail("no scout path"));
    let yaw0 = path.points[1].sub(path.points[0]).yaw();
    let mut start = Pose { x: f.entry_pos.x, y: f.entry_pos.y, yaw: yaw0 };
    let mut rng = rng;
    if let Some(r) = rng.as_deref_mut() {
        let side = Vec2::from_yaw(yaw0 + std::f64::consts::FRAC_PI_2).scale(2.0 * (uniform(r) - 0.5) * 2.0);
        start = Pose { x: start.x + side.x, y: start.y + side.y, yaw: yaw0 + 0.6 * (uniform(r) - 0.5) };
    }
    let mut pts = vec![start.pos()];
    pts.extend(path.points.iter().copied());
    let mut follower = Follower::new(Polyline::new(pts), 0.0, FollowerParams::default());
    let mut cfg = WorldConfig::new(map.clone(), Condition::Dry, start);
    cfg.lidar = None;
    let limits = Condition::Dry.speed_limits();
    let mut world = World::new(cfg);
    let mut disturbance = 0.0;
    while follower.progress() < spec.success.route_fraction && world.t_s() < spec.max_s {
        let o = world.odometry();
        follower.track(&o.pose);
        let cmd = follower.command(map, &o.pose, o.speed_mps, limits, Some(cap));
        let input = ObsInput {
            route: &follower,
            pose: o.pose,
            speed_mps: o.speed_mps,
            cap_mps: cap,
            ahead_m: f64::INFINITY,
        };
        let x = observe(&spec.observation, &input);
        let row: Vec<String> = x.iter().map(|v| format!("{v:.6}")).collect();
        println!("{},{:.6},{:.6}", row.join(","), cmd.speed_mps, cmd.yaw_rate_rps);
        if let Some(r) = rng.as_deref_mut() {
            // A slowly wandering disturbance (about ±0.1 rad/s).
            disturbance = 0.95 * disturbance + 0.05 * 0.2 * (uniform(r) - 0.5) * 10.0;
        }
        world.step(Command { speed_mps: cmd.speed_mps, yaw_rate_rps: cmd.yaw_rate_rps + disturbance });
    }
}

/// A seeded xorshift draw in [0, 1).
fn uniform(s: &mut u64) -> f64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    (*s >> 11) as f64 / (1u64 << 53) as f64
}
