//! `acres_vehicle_node`: the skill server over ROS 2.
//!
//! ```text
//! acres_vehicle_node --ros-args -p scenario:=scenarios/t1_01_one_field.json -p skills:=true
//! ```
//! Parameters: `scenario` (required: the map, condition, `blocked_s` and `local_planner`: the
//! in-tree planners `default` and `pure_pursuit`; a process plugin is refused), `maps_dir`,
//! `blocked_s`, `skills`, `heartbeat_timeout_s`, `heartbeat_grace_s`, `on_cancel`, `odom_timeout_s`,
//! `lidar_forward_m`, `lidar_height_m`, `rmw_framing`, `use_sim_time`; see the library docs.
//! Exit codes: 0 stopped by a signal, 2 bad input, 3 the environment (DDS refused).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

use std::process::ExitCode;

use acres_ros::run::{node_main, Environment, Shutdown};
use acres_ros::{RosArgs, RosEnv, RosNode};
use acres_scenario::local_planner::{LocalPlannerKey, BUILTIN_PLANNERS};
use acres_vehicle::local_planner::Builtin;
use acres_vehicle::node::{Params, VehicleNode};
use anyhow::Context;

fn main() -> ExitCode {
    node_main("acres_vehicle_node", "acres_vehicle", run)
}

fn run(args: RosArgs) -> anyhow::Result<()> {
    let params = Params::from_args(&args)?;
    let scenario = args.str_or("scenario", "")?;
    anyhow::ensure!(!scenario.is_empty(), "parameter scenario is required (-p scenario:=FILE)");
    let default_maps = std::path::Path::new(&scenario).parent().map(|p| p.join("maps")).unwrap_or_default();
    let maps_dir = args.str_or("maps_dir", &default_maps.display().to_string())?;
    let sc =
        acres_scenario::load(scenario.as_ref(), maps_dir.as_ref()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut opts = acres_vehicle::server_options(&sc);
    // A positive blocked_s overrides the scenario's; 0 (the launch files' default) keeps it.
    let blocked_s = args.f64_or("blocked_s", 0.0)?;
    anyhow::ensure!(
        blocked_s >= 0.0,
        "parameter blocked_s: must be 0 (the scenario's) or positive, got {blocked_s}"
    );
    if blocked_s > 0.0 {
        opts.blocked_s = blocked_s;
    }
    // The node drives with the in-tree local planners; a process plugin (`process:...`) runs
    // only in the harness's in-process world (docs/local-planner-protocol.md).
    let planner = match sc.local_planner_key() {
        LocalPlannerKey::Builtin(name) => Builtin::parse(&name).context("an in-tree local planner")?,
        LocalPlannerKey::Process(c) => anyhow::bail!(
            "{}: at local_planner: the vehicle node runs the in-tree local planners only ({}), not \"{}\"",
            scenario,
            BUILTIN_PLANNERS.join(", "),
            c.spec
        ),
    };
    let shutdown = Shutdown::install().map_err(|e| Environment(format!("signal handler: {e}")))?;
    let node = RosNode::new(args, RosEnv::from_env()?).map_err(|e| Environment(format!("ROS node: {e}")))?;
    // The scenario's learned skills, loaded (policies optimised) once, before any goal.
    let learned = acres_vehicle::learned::scenario_skills(&sc).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut vehicle =
        VehicleNode::new(node, params, sc.map_data.clone(), opts).context("endpoints")?.with_learned(learned);
    vehicle.set_local_planner(planner.factory());
    vehicle.run(&shutdown);
    Ok(())
}
