//! Messages of the vehicle node: odometry in, observation and events out.

use crate::{Observation, SkillEvent, SkillServer};
use acres_farm::geom::Pose;
use acres_msgs::acres_interfaces::{Observation as ObsMsg, SkillEvent as EventMsg};
use acres_msgs::geometry_msgs::Point;
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::std_msgs::Header;
use acres_ros::node::stamp;

/// The skill server's observation of an odometry message (its stamp is the server's time).
pub fn observation_of(o: &Odometry) -> Observation {
    let q = &o.pose.pose.orientation;
    let yaw = (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z));
    let p = &o.pose.pose.position;
    Observation {
        t_s: f64::from(o.header.stamp.sec) + f64::from(o.header.stamp.nanosec) * 1e-9,
        pose: Pose { x: p.x, y: p.y, yaw },
        speed_mps: o.twist.twist.linear.x,
    }
}

/// The frame of observations and events (acres_interfaces says `map`; the odometry's `odom`
/// frame has the map's coordinates in the simulated world, but the contract names the map).
const MAP_FRAME: &str = "map";

fn header(t_s: f64) -> Header {
    Header { stamp: stamp(t_s), frame_id: MAP_FRAME.into() }
}

/// `/acres/observation`.
pub fn observation_msg(obs: &Observation, server: &SkillServer, odom_m: f64, shield_holding: bool) -> ObsMsg {
    let mut m = ObsMsg {
        header: header(obs.t_s),
        x_m: obs.pose.x,
        y_m: obs.pose.y,
        yaw_rad: obs.pose.yaw,
        speed_mps: obs.speed_mps,
        odom_m,
        ahead_m: server.ahead_m(),
        shield_holding,
        energy_estimate_mj: f64::NAN,
        route_ahead: server.route_ahead().into_iter().map(|p| Point { x: p.x, y: p.y, z: 0.0 }).collect(),
        ..ObsMsg::default()
    };
    crate::messages::set_status_fields(&mut m, server.status_ref());
    m
}

/// `/acres/events`: one event, its details in their fields (NaN, 0 or empty where none).
pub fn event_msg(e: &SkillEvent) -> EventMsg {
    crate::messages::event_msg(e, header(e.t_s))
}
