//! ACRES Core over ROS 2: the simulated world as a node.
//!
//! The node runs `crate::World` (the vehicle without skills: kinematics, energy, objects,
//! contact, LiDAR) in real time × `rate`, one fixed 20 Hz step at a time, and loads the
//! scenario's map, start, condition, objects and object events itself.
//!
//! | topic | type | QoS | when |
//! | --- | --- | --- | --- |
//! | `/clock` | `rosgraph_msgs/Clock` | best effort, KeepLast(1) | every step |
//! | `/odom` | `nav_msgs/Odometry` (odom → base_link; pose = footprint centre, map coordinates) | default | every step |
//! | `/tf` | `tf2_msgs/TFMessage` (odom → base_link, base_link → lidar) | default, KeepLast(100) | every step |
//! | `/lidar/points` | `sensor_msgs/PointCloud2`, frame `lidar` (x, y, z, intensity float32) | sensor data | each sweep (10 Hz simulated) |
//! | `/acres/sim/truth` | `acres_interfaces/SimTruth` (objects, contact, fuel energy) | default | each sweep |
//! | `/cmd_vel` (in) | `geometry_msgs/Twist` (linear.x m/s, angular.z rad/s) | default | |
//!
//! Commands go stale as on a real base: a step uses the newest `/cmd_vel` only while it is at most
//! `cmd_timeout_s` of simulated time old; otherwise the vehicle is commanded to stop.
//!
//! Layout: [`Params`] (the node's parameters), [`CoreNode`] (the endpoints and the loop),
//! `convert` (world → messages).

mod convert;

use std::time::{Duration, Instant};

use crate::{Command, World};
use acres_msgs::acres_interfaces::SimTruth;
use acres_msgs::geometry_msgs::Twist;
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::rosgraph_msgs::Clock;
use acres_msgs::sensor_msgs::PointCloud2;
use acres_msgs::tf2_msgs::TFMessage;
use acres_ros::run::Shutdown;
use acres_ros::{qos, NodeError, Pub, RosArgs, RosNode, Sub};
use tracing::{info, trace};

pub use convert::{clock, cloud, odometry, tf, truth};

/// The node's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// The scenario file (`scenario`).
    pub scenario: String,
    /// The maps folder (`maps_dir`; default: `maps/` beside the scenario).
    pub maps_dir: String,
    /// Simulated seconds per wall second (`rate`, default 1).
    pub rate: f64,
    /// The world's seed (`seed`, default 0).
    pub seed: u64,
    /// A command older than this (simulated time) is stale: the vehicle stops (`cmd_timeout_s`, 0.5).
    pub cmd_timeout_s: f64,
    /// Publish the simulator's truth (`publish_truth`, default true).
    pub publish_truth: bool,
}

impl Params {
    /// Reads the parameters.
    pub fn from_args(a: &RosArgs) -> Result<Params, acres_ros::args::ArgsError> {
        let scenario = a.str_or("scenario", "")?;
        let default_maps = std::path::Path::new(&scenario)
            .parent()
            .map(|p| p.join("maps").display().to_string())
            .unwrap_or_else(|| "maps".into());
        Ok(Params {
            maps_dir: a.str_or("maps_dir", &default_maps)?,
            scenario,
            rate: a.f64_or("rate", 1.0)?,
            seed: a.f64_or("seed", 0.0)? as u64,
            cmd_timeout_s: a.f64_or("cmd_timeout_s", 0.5)?,
            publish_truth: a.bool_or("publish_truth", true)?,
        })
    }
}

/// The core node: its endpoints and the world.
pub struct CoreNode {
    /// The ROS node (kept alive while the loop runs).
    pub node: RosNode,
    world: World,
    params: Params,
    clock: Pub<Clock>,
    odom: Pub<Odometry>,
    tf: Pub<TFMessage>,
    points: Pub<PointCloud2>,
    truth: Pub<SimTruth>,
    cmd: Sub<Twist>,
}

impl CoreNode {
    /// Makes the endpoints.
    pub fn new(mut node: RosNode, world: World, params: Params) -> Result<CoreNode, NodeError> {
        Ok(CoreNode {
            clock: node.publisher("/clock", qos::clock())?,
            odom: node.publisher("odom", qos::default_profile())?,
            tf: node.publisher("/tf", qos::tf())?,
            points: node.publisher("lidar/points", qos::sensor_data())?,
            truth: node.publisher("acres/sim/truth", qos::default_profile())?,
            cmd: node.subscription("cmd_vel", qos::default_profile())?,
            node,
            world,
            params,
        })
    }

    /// Runs until a signal: steps the world at real time × `rate`.
    pub fn run(mut self, shutdown: &Shutdown) {
        let dt_s = self.world.config().dt_s;
        let rate = self.params.rate.max(1e-3);
        let start = Instant::now();
        let mut cmd = Command::STOP;
        let mut cmd_t_s = f64::NEG_INFINITY;
        let mut steps: u64 = 0;
        info!(rate, dt_s, "world running");
        while !shutdown.requested() {
            let due = start + Duration::from_secs_f64(steps as f64 * dt_s / rate);
            loop {
                if let Some(t) = self.cmd.latest() {
                    cmd = Command { speed_mps: t.linear.x, yaw_rate_rps: t.angular.z };
                    cmd_t_s = self.world.t_s();
                }
                let now = Instant::now();
                if now >= due || shutdown.requested() {
                    break;
                }
                std::thread::sleep((due - now).min(Duration::from_micros(500)));
            }
            let fresh = self.world.t_s() - cmd_t_s <= self.params.cmd_timeout_s + 1e-9;
            let info = self.world.step(if fresh { cmd } else { Command::STOP });
            steps += 1;
            let t_s = self.world.t_s();
            self.clock.publish(clock(t_s));
            self.odom.publish(odometry(&self.world));
            self.tf.publish(tf(&self.world));
            if info.sweep {
                self.points.publish(cloud(&self.world));
                if self.params.publish_truth {
                    self.truth.publish(truth(&self.world));
                }
                trace!(t_s, points = self.world.sweep().points.len(), "sweep");
            }
        }
        info!(t_s = self.world.t_s(), steps, "stopped");
    }
}
