//! `acres_vehicle_node`: the skill server over ROS 2 (the node module of `acres_vehicle`), steering
//! with the scenario's local planner: an in-tree one or a process plugin of `acres_local_planners`
//! (docs/local-planner-protocol.md). A package of its own because `acres_local_planners` depends on
//! the vehicle library (ARCHITECTURE.md, D103).
//!
//! ```text
//! acres_vehicle_node --ros-args -p scenario:=scenarios/t1_01_one_field.json -p skills:=true
//! ```
//! Parameters: `scenario` (required: the map, condition, `blocked_s` and `local_planner`: the
//! in-tree planners `default` and `pure_pursuit`, or `process:COMMAND` run in the scenario file's
//! folder), `maps_dir`,
//! `blocked_s`, `plugin_step_budget_s` (a process plugin's time to answer a control step, s;
//! default 0.2), `skills`, `heartbeat_timeout_s`, `heartbeat_grace_s`, `on_cancel`, `odom_timeout_s`,
//! `lidar_forward_m`, `lidar_height_m`, `rmw_framing`, `use_sim_time`; see the library docs.
//! Exit codes: 0 stopped by a signal, 2 bad input, 3 the environment (DDS refused).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use acres_local_planners::{ProcessConfig, ProcessFactory};
use acres_ros::run::{node_main, Environment, Shutdown};
use acres_ros::{RosArgs, RosEnv, RosNode};
use acres_scenario::local_planner::LocalPlannerKey;
use acres_vehicle::local_planner::LocalPlannerFactory;
use acres_vehicle::node::{Params, VehicleNode};
use anyhow::Context;

/// The default of `plugin_step_budget_s`: the process plugin's own ([`ProcessConfig`]'s 200 ms).
const PLUGIN_STEP_BUDGET_S: f64 = 0.2;

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
    // The scenario's local planner (checked at load): a process plugin starts at the first
    // control step of the first motion, as in the in-process world, and answers each step within
    // plugin_step_budget_s (the in-process world's 0.2 s by default: a real-time control step).
    let budget_s = args.f64_or("plugin_step_budget_s", PLUGIN_STEP_BUDGET_S)?;
    anyhow::ensure!(
        budget_s.is_finite() && budget_s > 0.0,
        "parameter plugin_step_budget_s: must be positive (default {PLUGIN_STEP_BUDGET_S}), got {budget_s}"
    );
    let planner: Arc<dyn LocalPlannerFactory> = match sc.local_planner_key() {
        LocalPlannerKey::Process(cmd) => {
            let config =
                ProcessConfig { step_budget: Duration::from_secs_f64(budget_s), ..Default::default() };
            Arc::new(ProcessFactory::new(cmd, config))
        }
        key => acres_local_planners::factory_of_key(&key),
    };
    let shutdown = Shutdown::install().map_err(|e| Environment(format!("signal handler: {e}")))?;
    let node = RosNode::new(args, RosEnv::from_env()?).map_err(|e| Environment(format!("ROS node: {e}")))?;
    // The scenario's learned skills, loaded (policies optimised) once, before any goal.
    let learned = acres_vehicle::learned::scenario_skills(&sc).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut vehicle =
        VehicleNode::new(node, params, sc.map_data.clone(), opts).context("endpoints")?.with_learned(learned);
    vehicle.set_local_planner(planner);
    vehicle.run(&shutdown);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_step_budget_is_the_plugins_own() {
        assert_eq!(Duration::from_secs_f64(PLUGIN_STEP_BUDGET_S), ProcessConfig::default().step_budget);
    }
}
