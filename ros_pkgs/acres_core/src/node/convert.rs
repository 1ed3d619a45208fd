//! The world's state as ROS messages.

use crate::World;
use acres_msgs::acres_interfaces::{SimObject, SimTruth};
use acres_msgs::geometry_msgs::{
    Point, Pose, PoseWithCovariance, Quaternion, Transform, TransformStamped, Twist, TwistWithCovariance,
    Vector3,
};
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::rosgraph_msgs::Clock;
use acres_msgs::sensor_msgs::PointCloud2;
use acres_msgs::std_msgs::Header;
use acres_msgs::tf2_msgs::TFMessage;
use acres_ros::node::stamp;

/// The odometry frame (the map's coordinates).
pub const ODOM_FRAME: &str = "odom";
/// The vehicle frame (footprint centre, x forward).
pub const BASE_FRAME: &str = "base_link";
/// The LiDAR frame.
pub const LIDAR_FRAME: &str = "lidar";
/// The map frame (the simulator's truth, as acres_interfaces/SimTruth says).
pub const MAP_FRAME: &str = "map";

fn header(t_s: f64, frame: &str) -> Header {
    Header { stamp: stamp(t_s), frame_id: frame.into() }
}

fn yaw_quat(yaw_rad: f64) -> Quaternion {
    let (s, c) = (yaw_rad / 2.0).sin_cos();
    Quaternion { x: 0.0, y: 0.0, z: s, w: c }
}

/// `/clock` at `t_s`.
pub fn clock(t_s: f64) -> Clock {
    Clock { clock: stamp(t_s) }
}

/// `/odom`: pose in `odom` (= map coordinates), twist in `base_link`.
pub fn odometry(w: &World) -> Odometry {
    let o = w.odometry();
    Odometry {
        header: header(o.t_s, ODOM_FRAME),
        child_frame_id: BASE_FRAME.into(),
        pose: PoseWithCovariance {
            pose: Pose {
                position: Point { x: o.pose.x, y: o.pose.y, z: 0.0 },
                orientation: yaw_quat(o.pose.yaw),
            },
            covariance: [0.0; 36],
        },
        twist: TwistWithCovariance {
            twist: Twist {
                linear: Vector3 { x: o.speed_mps, y: 0.0, z: 0.0 },
                angular: Vector3 { x: 0.0, y: 0.0, z: o.yaw_rate_rps },
            },
            covariance: [0.0; 36],
        },
    }
}

/// `/tf`: odom → base_link, and base_link → lidar (the mount).
pub fn tf(w: &World) -> TFMessage {
    let o = w.odometry();
    let (fwd, up) = w.lidar_config().map_or((0.0, 0.0), |l| (l.mount_forward_m, l.mount_height_m));
    TFMessage {
        transforms: vec![
            TransformStamped {
                header: header(o.t_s, ODOM_FRAME),
                child_frame_id: BASE_FRAME.into(),
                transform: Transform {
                    translation: Vector3 { x: o.pose.x, y: o.pose.y, z: 0.0 },
                    rotation: yaw_quat(o.pose.yaw),
                },
            },
            TransformStamped {
                header: header(o.t_s, BASE_FRAME),
                child_frame_id: LIDAR_FRAME.into(),
                transform: Transform {
                    translation: Vector3 { x: fwd, y: 0.0, z: up },
                    rotation: yaw_quat(0.0),
                },
            },
        ],
    }
}

/// `/lidar/points`: the latest sweep in the `lidar` frame.
pub fn cloud(w: &World) -> PointCloud2 {
    let s = w.sweep();
    acres_ros::cloud::to_cloud(header(s.stamp_s, LIDAR_FRAME), &s.points)
}

/// `/acres/sim/truth`: objects, contact and fuel energy (simulated runs only).
pub fn truth(w: &World) -> SimTruth {
    SimTruth {
        header: header(w.t_s(), MAP_FRAME),
        objects: w
            .objects()
            .values()
            .map(|o| SimObject {
                id: o.id,
                kind: serde_json::to_value(o.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                x_m: o.pose.x,
                y_m: o.pose.y,
                yaw_rad: o.pose.yaw,
                first_seen_s: w.first_seen(o.id).unwrap_or(f64::NAN),
            })
            .collect(),
        contact: w.contact(),
        contact_steps: w.contact_steps(),
        contact_object: w.contact_object().map_or(-1, i64::from),
        energy_mj: w.energy_mj(),
    }
}
