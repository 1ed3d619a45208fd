//! `acres_bridge`: the bridge node between the vehicle's ROS 2 side and the harness's link.
//!
//! ```text
//! acres_bridge --ros-args -p host:=127.0.0.1 -p port:=5630 -p use_sim_time:=true
//! ```
//! Parameters: `host`, `port`, `token` (or `ACRES_LINK_TOKEN`), `allow_insecure`,
//! `rmw_framing`, `use_sim_time`; see the library docs. Exit codes: 0 stopped by a signal, 2 bad
//! input (a non-loopback host without a token), 3 the environment (DDS refused, a port in use).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

use std::process::ExitCode;

use acres_bridge::{Bridge, Params};
use acres_ros::run::{node_main, Environment, Shutdown};
use acres_ros::{RosArgs, RosEnv, RosNode};

fn main() -> ExitCode {
    node_main("acres_bridge", "acres_bridge", run)
}

fn run(args: RosArgs) -> anyhow::Result<()> {
    let params = Params::from_args(&args)?;
    params.check().map_err(|e| anyhow::anyhow!(e))?;
    let shutdown = Shutdown::install().map_err(|e| Environment(format!("signal handler: {e}")))?;
    let node = RosNode::new(args, RosEnv::from_env()?).map_err(|e| Environment(format!("ROS node: {e}")))?;
    // Every failure to start here is the machine's: the port in use, DDS refusing an endpoint.
    let bridge = Bridge::new(node, params).map_err(|e| Environment(format!("{e:#}")))?;
    bridge.run(&shutdown);
    Ok(())
}
