//! The line protocol's round trip per control step: the Python example plugin
//! (`examples/local_planner_plugin.py`) steers along the route from home to F53 of the default
//! map, the vehicle placed on the route at each step; each step is timed from writing `step` to
//! reading `command`. Prints p50, p99 and max; asserts nothing about time.
//!
//! ```text
//! cargo bench -p acres_local_planners --bench round_trip
//! ```

use std::path::Path;
use std::time::Instant;

use acres_farm::{Condition, LaneGraph, Map, Pose, HOME};
use acres_local_planners::{ProcessConfig, ProcessPlanner};
use acres_scenario::local_planner::LocalPlannerKey;
use acres_vehicle::follower::{Follower, FollowerParams};
use acres_vehicle::local_planner::{LocalPlanner, PlanStart, PlanStep};
use acres_vehicle::SkillKind;

const STEPS: usize = 5000;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let map = Map::load(&root.join("scenarios/maps/default.json")).expect("the default map");
    let graph = LaneGraph::new(&map);
    let entry = map.fields["F53"].entry.clone();
    let route = graph.route_nodes(HOME, &entry).expect("a route home -> F53");
    let scenario = root.join("scenarios/local_planners/python_plugin_one_field.json");
    let spec = "process:python3 ../../examples/local_planner_plugin.py";
    let LocalPlannerKey::Process(cmd) = LocalPlannerKey::parse(spec, &scenario).expect("the spec") else {
        unreachable!("a process spec")
    };
    let params = FollowerParams::default();
    let mut planner = ProcessPlanner::new(cmd, ProcessConfig::default(), params.max_curvature);
    let limits = Condition::Dry.speed_limits();
    planner.start(&PlanStart {
        id: 1,
        skill: SkillKind::Goto,
        target: "F53",
        route: &route,
        s_m: 0.0,
        limits,
        cap_mps: None,
        goal_tolerance_m: params.goal_tolerance_m,
    });
    let mut track = Follower::new(route.clone(), 0.0, params);
    let mut times_us = Vec::with_capacity(STEPS);
    for i in 0..STEPS {
        let s_m = (i as f64 * 0.1) % (route.length_m() - 5.0);
        track.s_m = s_m;
        let p = route.point_at(s_m);
        let pose = Pose { x: p.x, y: p.y, yaw: route.yaw_at(s_m) };
        let step = PlanStep {
            id: 1,
            t_s: i as f64 * 0.05,
            pose,
            speed_mps: 2.0,
            track: &track,
            map: &map,
            limits,
            cap_mps: None,
            ahead_m: None,
        };
        let t0 = Instant::now();
        planner.command(&step).expect("the example plugin answers");
        times_us.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    // The first step includes the process's start and hello.
    let first_ms = times_us[0] / 1e3;
    let mut rest: Vec<f64> = times_us[1..].to_vec();
    rest.sort_by(f64::total_cmp);
    let q = |f: f64| rest[((rest.len() - 1) as f64 * f).round() as usize];
    println!(
        "local planner round trip (python3 example, {} steps): p50 {:.0} us, p99 {:.0} us, max {:.0} us; first step (start + hello) {:.0} ms",
        rest.len(),
        q(0.5),
        q(0.99),
        rest[rest.len() - 1],
        first_ms
    );
}
