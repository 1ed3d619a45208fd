//! `acres_core_node`: ACRES Core over ROS 2.
//!
//! ```text
//! acres_core_node --ros-args -p scenario:=scenarios/t1_01_one_field.json -p rate:=1.0
//! ```
//! Parameters: `scenario` (required), `maps_dir`, `rate`, `seed`, `cmd_timeout_s`,
//! `publish_truth`; see the library docs. Exit codes: 0 stopped by a signal, 2 bad input, 3 the environment (DDS refused).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

use std::process::ExitCode;

use acres_core::node::{CoreNode, Params};
use acres_ros::run::{node_main, Environment, Shutdown};
use acres_ros::{RosArgs, RosEnv, RosNode};
use anyhow::Context;

fn main() -> ExitCode {
    node_main("acres_core_node", "acres_core", run)
}

fn run(args: RosArgs) -> anyhow::Result<()> {
    let params = Params::from_args(&args)?;
    anyhow::ensure!(!params.scenario.is_empty(), "parameter scenario is required (-p scenario:=FILE)");
    let sc = acres_scenario::load(params.scenario.as_ref(), params.maps_dir.as_ref())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let (wc, events) = acres_core::world_of(&sc, params.seed);
    let mut world = acres_core::World::new(wc);
    world.schedule(events);
    let shutdown = Shutdown::install().map_err(|e| Environment(format!("signal handler: {e}")))?;
    let node = RosNode::new(args, RosEnv::from_env()?).map_err(|e| Environment(format!("ROS node: {e}")))?;
    CoreNode::new(node, world, params).context("endpoints")?.run(&shutdown);
    Ok(())
}
