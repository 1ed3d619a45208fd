//! The world's state, the skill server's events and the run rows as `acres_msgs` messages.
//! Pure functions: they read and never change what they are given.
//!
//! Frames: `map` (the farm map; also the odometry frame's parent, identity), `odom` (the
//! odometry frame; the pose is exact, so it equals `map`), `base_link` (the footprint centre,
//! x forward, y left), `lidar` (the sensor: `mount_forward_m` ahead of `base_link`,
//! `mount_height_m` up).

use serde_json::Value;

use acres_farm::geom::Pose as MapPose;
use acres_msgs::acres_interfaces::{ModelCall, Observation, PlanVerdict, PlannerWake, SkillEvent, ToolCall};
use acres_msgs::builtin_interfaces::Time;
use acres_msgs::geometry_msgs::{
    Point, Pose, PoseWithCovariance, Quaternion, Transform, TransformStamped, Twist, TwistWithCovariance,
    Vector3,
};
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::sensor_msgs::{LaserScan, PointCloud2, PointField};
use acres_msgs::std_msgs::Header;
use acres_msgs::tf2_msgs::TFMessage;
use acres_vehicle::Status;

use crate::runfolder::rows::{ModelErrorRow, ModelReplyRow, ModelSendRow, PlanCheckRow, ToolRow, WakeRow};
use crate::world::VehicleView;

/// The map frame.
pub const MAP_FRAME: &str = "map";
/// The odometry frame.
pub const ODOM_FRAME: &str = "odom";
/// The vehicle frame.
pub const BASE_FRAME: &str = "base_link";
/// The LiDAR's frame.
pub const LIDAR_FRAME: &str = "lidar";

/// A header at mission time `t_s` in `frame`.
pub fn header(t_s: f64, frame: &str) -> Header {
    Header { stamp: Time::from_secs_f64(t_s), frame_id: frame.into() }
}

/// One transform `parent → child` at `t_s`.
pub fn transform(t_s: f64, parent: &str, child: &str, xyz_m: [f64; 3], yaw_rad: f64) -> TransformStamped {
    TransformStamped {
        header: header(t_s, parent),
        child_frame_id: child.into(),
        transform: Transform {
            translation: Vector3 { x: xyz_m[0], y: xyz_m[1], z: xyz_m[2] },
            rotation: Quaternion::from_yaw(yaw_rad),
        },
    }
}

/// The vehicle's pose as `odom → base_link` on `/tf`.
pub fn tf(v: &VehicleView) -> TFMessage {
    let mut m = TFMessage { transforms: vec![transform(0.0, ODOM_FRAME, BASE_FRAME, [0.0; 3], 0.0)] };
    set_tf(&mut m, v);
    m
}

/// Makes `m`, a message of [`tf`], the pose of `v` (its frames kept).
pub fn set_tf(m: &mut TFMessage, v: &VehicleView) {
    if let Some(t) = m.transforms.first_mut() {
        t.header.stamp = Time::from_secs_f64(v.t_s);
        t.transform.translation = Vector3 { x: v.pose.x, y: v.pose.y, z: 0.0 };
        t.transform.rotation = Quaternion::from_yaw(v.pose.yaw);
    }
}

/// The static transforms on `/tf_static`: `map → odom` (identity) and `base_link → lidar`.
pub fn tf_static(mount_forward_m: f64, mount_height_m: f64) -> TFMessage {
    TFMessage {
        transforms: vec![
            transform(0.0, MAP_FRAME, ODOM_FRAME, [0.0; 3], 0.0),
            transform(0.0, BASE_FRAME, LIDAR_FRAME, [mount_forward_m, 0.0, mount_height_m], 0.0),
        ],
    }
}

/// The odometry on `/odom`: the pose in `odom`, the speed along `base_link`'s x. The yaw rate
/// is not part of the vehicle's view and is left 0; covariances are 0 (the pose is exact).
pub fn odometry(v: &VehicleView) -> Odometry {
    let mut m = Odometry {
        header: header(0.0, ODOM_FRAME),
        child_frame_id: BASE_FRAME.into(),
        pose: PoseWithCovariance { pose: pose(MapPose::default(), 0.0), covariance: [0.0; 36] },
        twist: TwistWithCovariance { twist: Twist::default(), covariance: [0.0; 36] },
    };
    set_odometry(&mut m, v);
    m
}

/// Makes `m`, a message of [`odometry`], the odometry of `v` (its frames and zeros kept).
pub fn set_odometry(m: &mut Odometry, v: &VehicleView) {
    m.header.stamp = Time::from_secs_f64(v.t_s);
    m.pose.pose = pose(v.pose, 0.0);
    m.twist.twist.linear.x = v.speed_mps;
}

/// A map pose at height `z_m` as a `geometry_msgs/Pose`.
pub fn pose(p: MapPose, z_m: f64) -> Pose {
    Pose { position: Point { x: p.x, y: p.y, z: z_m }, orientation: Quaternion::from_yaw(p.yaw) }
}

/// `/acres/observation`: what the vehicle knows of itself and its skill server.
pub fn observation(v: &VehicleView, st: &Status, ahead_m: f64, energy_estimate_mj: f64) -> Observation {
    let mut o = Observation::default();
    set_observation(&mut o, v, st, ahead_m, energy_estimate_mj);
    o
}

/// Makes `o` the [`observation`] of `v` and `st`, reusing the memory of its text and lists (the
/// recorder writes one each control step).
pub fn set_observation(
    o: &mut Observation,
    v: &VehicleView,
    st: &Status,
    ahead_m: f64,
    energy_estimate_mj: f64,
) {
    o.header.stamp = Time::from_secs_f64(v.t_s);
    acres_vehicle::messages::set_text(&mut o.header.frame_id, MAP_FRAME);
    o.x_m = v.pose.x;
    o.y_m = v.pose.y;
    o.yaw_rad = v.pose.yaw;
    o.speed_mps = v.speed_mps;
    o.odom_m = v.odom_m;
    acres_vehicle::messages::set_status_fields(o, st.view());
    o.ahead_m = ahead_m;
    o.shield_holding = st.hold_since_s.is_some();
    o.energy_estimate_mj = energy_estimate_mj;
    // Empty in recordings: a route of hundreds of points 20 times a second would grow the files
    // several times over.
    o.route_ahead.clear();
}

/// `/acres/events`: one event of the skill server (the vehicle's one conversion).
pub fn skill_event(e: &acres_vehicle::SkillEvent) -> SkillEvent {
    acres_vehicle::messages::event_msg(e, header(e.t_s, MAP_FRAME))
}

/// `/scan`: the scan function's 360 one-degree ranges (`Scan::ranges_m`), bin 0 forward,
/// counter-clockwise, in the LiDAR's frame; +inf where a bin holds no return.
pub fn laser_scan(t_s: f64, ranges_m: Vec<f32>, period_s: f64, max_range_m: f32) -> LaserScan {
    let mut m = LaserScan {
        header: header(0.0, LIDAR_FRAME),
        angle_min: 0.0,
        angle_max: 0.0,
        angle_increment: std::f32::consts::PI / 180.0,
        time_increment: 0.0,
        scan_time: 0.0,
        range_min: 0.05,
        range_max: 0.0,
        ranges: ranges_m,
        intensities: Vec::new(),
    };
    set_laser_scan(&mut m, t_s, period_s, max_range_m);
    m
}

/// Makes `m`, a message of [`laser_scan`], the scan at `t_s` of its ranges (its frame kept).
pub fn set_laser_scan(m: &mut LaserScan, t_s: f64, period_s: f64, max_range_m: f32) {
    m.header.stamp = Time::from_secs_f64(t_s);
    m.angle_max = m.angle_increment * m.ranges.len().saturating_sub(1) as f32;
    m.scan_time = period_s as f32;
    m.range_max = max_range_m;
}

/// The bytes of one point of `/lidar/points`.
pub const POINT_STEP_BYTES: usize = 16;

/// A sweep's points as `/lidar/points` data: `x, y, z, intensity` as float32 little-endian,
/// [`POINT_STEP_BYTES`] a point. One pass that the compiler turns into plain copies.
pub fn point_bytes(points: &[[f32; 4]]) -> Vec<u8> {
    let mut data = Vec::new();
    point_bytes_into(points, &mut data);
    data
}

/// [`point_bytes`] into a buffer that is reused (its contents are replaced).
pub fn point_bytes_into(points: &[[f32; 4]], data: &mut Vec<u8>) {
    data.clear();
    data.resize(points.len() * POINT_STEP_BYTES, 0);
    for (out, p) in data.chunks_exact_mut(POINT_STEP_BYTES).zip(points) {
        for (o, v) in out.chunks_exact_mut(4).zip(p) {
            o.copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// `/lidar/points`: one sweep's returns as [`point_bytes`] gives them, in the LiDAR's frame
/// (one row, dense).
pub fn point_cloud(t_s: f64, data: Vec<u8>) -> PointCloud2 {
    let field = |name: &str, offset: u32| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32,
        count: 1,
    };
    let width = u32::try_from(data.len() / POINT_STEP_BYTES).unwrap_or(u32::MAX);
    PointCloud2 {
        header: header(t_s, LIDAR_FRAME),
        height: 1,
        width,
        fields: vec![field("x", 0), field("y", 4), field("z", 8), field("intensity", 12)],
        is_bigendian: false,
        point_step: POINT_STEP_BYTES as u32,
        row_step: width.saturating_mul(POINT_STEP_BYTES as u32),
        data,
        is_dense: true,
    }
}

/// `/acres/planner/wake` from a `wake` row.
pub fn planner_wake(w: &WakeRow) -> PlannerWake {
    PlannerWake {
        stamp: Time::from_secs_f64(w.t),
        n: w.n,
        reason: w.reason.as_str().into(),
        message: w.message.clone(),
        frame: w.frame.as_ref().map_or_else(String::new, |f| format!("frames/{f}.png")),
    }
}

/// `/acres/planner/model_call` from a call's `model_send` row (when there was one) and its reply.
pub fn model_call_reply(send: Option<&ModelSendRow>, r: &ModelReplyRow) -> ModelCall {
    ModelCall {
        request_stamp: Time::from_secs_f64(send.map_or(r.t - r.latency_s, |s| s.t)),
        latency_s: r.latency_s,
        call: r.call,
        wake: send.map_or(0, |s| s.wake),
        blocks_sent: send.map_or(0, |s| u32::try_from(s.blocks.len()).unwrap_or(u32::MAX)),
        stop: r.stop.as_str().into(),
        text: r.text.clone(),
        reasoning: r.reasoning.clone().unwrap_or_default(),
        tool_call_ids: r.tool_calls.iter().map(|c| c.id.clone()).collect(),
        input_tokens: r.usage.input_tokens,
        output_tokens: r.usage.output_tokens,
        cache_read_tokens: r.usage.cache_read_tokens,
        cache_write_tokens: r.usage.cache_write_tokens,
        error: String::new(),
    }
}

/// `/acres/planner/model_call` for a call without a reply (`error` is `kind: message`).
pub fn model_call_error(send: Option<&ModelSendRow>, e: &ModelErrorRow) -> ModelCall {
    let kind =
        serde_json::to_value(e.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    ModelCall {
        request_stamp: Time::from_secs_f64(send.map_or(e.t, |s| s.t)),
        latency_s: e.latency_s,
        call: e.call,
        wake: send.map_or(0, |s| s.wake),
        blocks_sent: send.map_or(0, |s| u32::try_from(s.blocks.len()).unwrap_or(u32::MAX)),
        error: format!("{kind}: {}", e.error),
        ..ModelCall::default()
    }
}

/// `/acres/planner/tool_call` from a `tool` row.
pub fn tool_call(t: &ToolRow) -> ToolCall {
    ToolCall {
        stamp: Time::from_secs_f64(t.t),
        wake: t.wake,
        call_id: t.call_id.clone(),
        name: t.name.clone(),
        arguments_json: t.arguments.to_string(),
        result_json: Value::Object(t.result.clone()).to_string(),
        error: t.error,
    }
}

/// `/acres/planner/plan_verdict` from a `plan_check` row.
pub fn plan_verdict(p: &PlanCheckRow) -> PlanVerdict {
    PlanVerdict {
        stamp: Time::from_secs_f64(p.t),
        visits: p.visits.clone(),
        return_home: p.return_home,
        accepted: p.accepted,
        source: p.source.as_str().into(),
        reason: p.reason.clone().unwrap_or_default(),
        counterexample: p.counterexample.clone().unwrap_or_default(),
        planned_time_s: p.planned_time_s.unwrap_or(f64::NAN),
        planned_energy_mj: p.planned_energy_mj.unwrap_or(f64::NAN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acres_msgs::Message;
    use acres_vehicle::scan::Scan;

    #[test]
    fn a_shield_hold_keeps_its_place_and_a_clear_way_is_infinite() {
        let e = acres_vehicle::SkillEvent {
            t_s: 12.5,
            name: acres_vehicle::EventName::ShieldHold,
            id: Some(3),
            skill: None,
            code: None,
            cause: None,
            detail: acres_vehicle::EventDetail::Hold { ahead_m: 7.5, stopping_m: 6.0, x: 10.0, y: -4.0 },
        };
        let m = skill_event(&e);
        assert_eq!((m.event.as_str(), m.skill_id, m.ahead_m, m.stopping_m), ("shield_hold", 3, 7.5, 6.0));
        assert_eq!((m.hold_at.x, m.hold_at.y), (10.0, -4.0));
        assert!(m.route_m.is_nan() && m.target.is_empty());
        assert_eq!(m.header.stamp, Time { sec: 12, nanosec: 500_000_000 });
        let clear = acres_vehicle::SkillEvent {
            detail: acres_vehicle::EventDetail::Release { held_s: 3.0, ahead_m: None, why: None },
            ..e
        };
        assert_eq!(skill_event(&clear).ahead_m, f64::INFINITY);
        // The bytes decode as the same message (the CDR of acres_msgs).
        assert_eq!(SkillEvent::decode(&m.encode()).unwrap().stopping_m, 6.0);
    }

    #[test]
    fn a_message_set_in_place_equals_one_made_anew_whatever_it_held_before() {
        use acres_farm::geom::Pose as MapPose;
        use std::collections::BTreeMap;
        let v = |t_s: f64, x: f64| VehicleView {
            t_s,
            pose: MapPose { x, y: -2.0, yaw: 0.5 },
            speed_mps: 3.0,
            odom_m: x,
        };
        let mut busy = Status {
            skill: Some(acres_vehicle::SkillKind::Scout),
            id: Some(4),
            target: Some("F53".into()),
            interrupted: Some((acres_vehicle::SkillKind::Goto, 2, "home".into())),
            coverage: BTreeMap::from([("F51".into(), 1.0), ("F52".into(), 0.4), ("F53".into(), 0.1)]),
            scouted: vec!["F51".into(), "F52".into()],
            ..Status::default()
        };
        busy.hold_since_s = Some(3.0);
        let idle = Status { coverage: BTreeMap::from([("F51".into(), 1.0)]), ..Status::default() };
        // From a longer status to a shorter one and back.
        let mut o = observation(&v(1.0, 5.0), &busy, 7.0, 0.2);
        for (view, st) in [(v(1.05, 5.2), &idle), (v(1.1, 5.4), &busy), (v(1.15, 5.6), &idle)] {
            set_observation(&mut o, &view, st, f64::INFINITY, 0.3);
            assert_eq!(o.encode(), observation(&view, st, f64::INFINITY, 0.3).encode());
        }
        let (mut t, mut od) = (tf(&v(0.0, 0.0)), odometry(&v(0.0, 0.0)));
        set_tf(&mut t, &v(2.0, 9.0));
        set_odometry(&mut od, &v(2.0, 9.0));
        assert_eq!(t.encode(), tf(&v(2.0, 9.0)).encode());
        assert_eq!(od.encode(), odometry(&v(2.0, 9.0)).encode());
        let mut scan = laser_scan(0.0, Vec::new(), 0.0, 0.0);
        scan.ranges = vec![1.0; 360];
        set_laser_scan(&mut scan, 3.0, 0.1, 40.0);
        assert_eq!(scan.encode(), laser_scan(3.0, vec![1.0; 360], 0.1, 40.0).encode());
    }

    #[test]
    fn the_laser_scan_is_the_scan_functions_bins_counter_clockwise_from_forward() {
        let mut scan = Scan::default();
        scan.ranges_m[90] = 4.0;
        let m = laser_scan(1.0, scan.ranges_m.to_vec(), 0.1, 40.0);
        assert_eq!(m.ranges.len(), 360);
        let bearing = m.angle_min + 90.0 * m.angle_increment;
        assert!((bearing - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
        assert_eq!((m.ranges[90], m.ranges[0]), (4.0, f32::INFINITY));
        assert_eq!(m.header.frame_id, LIDAR_FRAME);
    }

    #[test]
    fn a_point_cloud_holds_each_point_as_four_little_endian_floats() {
        let m = point_cloud(2.0, point_bytes(&[[1.0, 2.0, 3.0, 0.8], [-1.0, 0.5, -2.2, 0.2]]));
        assert_eq!((m.width, m.height, m.point_step, m.row_step, m.data.len()), (2, 1, 16, 32, 32));
        assert_eq!(&m.data[16..20], &(-1.0f32).to_le_bytes());
        let names: Vec<&str> = m.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["x", "y", "z", "intensity"]);
    }
}
