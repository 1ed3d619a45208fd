//! The vehicle node's shield over real DDS (loopback, private network namespace), measured
//! from outside the process:
//!
//! 1. **Reaction time**: this program plays the vehicle base (it publishes `/odom` and
//!    `/lidar/points`) while the node runs a `goto`. Each trial publishes a sweep that shows an
//!    obstacle 3 m ahead (inside any stopping distance) and times the first zero `/cmd_vel` that
//!    follows; a clear sweep then releases the hold. p50 / p99 / max over the trials.
//! 2. **CPU per sweep**: 14,400-point sweeps at 10 Hz (with odometry at 20 Hz) for 10 s; the
//!    node's CPU time (utime + stime from /proc) divided by the sweeps.
//!
//! ```text
//! cargo build --release -p acres_vehicle_node
//! unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; exec cargo bench -p acres_vehicle --bench shield_reaction'
//! ```
//! `ACRES_BENCH_TRIALS` sets the trial count (default 300).

#[path = "../tests/util/mod.rs"]
mod util;

use std::time::{Duration, Instant};

use acres_msgs::geometry_msgs::{
    Point, Pose, PoseWithCovariance, Quaternion, Twist, TwistWithCovariance, Vector3,
};
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::sensor_msgs::PointCloud2;
use acres_msgs::std_msgs::Header;
use acres_ros::node::stamp;
use acres_ros::qos;
use util::*;

fn odom(t_s: f64, yaw: f64, speed_mps: f64) -> Odometry {
    Odometry {
        header: Header { stamp: stamp(t_s), frame_id: "odom".into() },
        child_frame_id: "base_link".into(),
        pose: PoseWithCovariance {
            pose: Pose {
                position: Point { x: 0.0, y: 0.0, z: 0.0 },
                orientation: Quaternion { x: 0.0, y: 0.0, z: (yaw / 2.0).sin(), w: (yaw / 2.0).cos() },
            },
            covariance: [0.0; 36],
        },
        twist: TwistWithCovariance {
            twist: Twist {
                linear: Vector3 { x: speed_mps, y: 0.0, z: 0.0 },
                angular: Vector3 { x: 0.0, y: 0.0, z: 0.0 },
            },
            covariance: [0.0; 36],
        },
    }
}

/// A 16 × 900 sweep (14,400 points): ground returns all around, plus an obstacle wall
/// `obstacle_m` ahead when given.
fn sweep(t_s: f64, obstacle_m: Option<f32>) -> PointCloud2 {
    let mut pts = Vec::with_capacity(14_400);
    for ring in 0..16 {
        for col in 0..900 {
            let az = col as f32 * (std::f32::consts::TAU / 900.0);
            let r = 5.0 + ring as f32 * 2.0;
            pts.push([r * az.cos(), r * az.sin(), -2.2, 0.5]);
        }
    }
    if let Some(d) = obstacle_m {
        for (i, p) in pts.iter_mut().take(64).enumerate() {
            *p = [d, -1.6 + i as f32 * 0.05, -1.0, 1.0];
        }
    }
    acres_ros::cloud::to_cloud(Header { stamp: stamp(t_s), frame_id: "lidar".into() }, &pts)
}

fn cpu_s(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, r)| r).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0 // utime, stime (fields 14, 15), USER_HZ = 100
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    // A benchmark skips loudly outside a private network namespace (a failure under
    // ACRES_REQUIRE_NETNS=1); the tests fail instead (util::require_netns).
    if !acres_ros::testing::require_private_netns("SHIELD REACTION BENCH") {
        return;
    }
    let trials: usize = std::env::var("ACRES_BENCH_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let sc = scenario("t1_01_one_field");
    // A bench: no planner beats here, so the deadman is off (heartbeat_timeout_s 0, bench only).
    let veh = vehicle_node(31, &sc, &["odom_timeout_s:=5.0", "heartbeat_timeout_s:=0.0"]);
    let mut c = Client::new(31, "fastrtps");
    let odom_pub = c.node.publisher::<Odometry>("/odom", qos::default_profile()).unwrap();
    let cloud_pub = c.node.publisher::<PointCloud2>("/lidar/points", qos::sensor_data()).unwrap();
    // The home pose faces the lane (the map's home yaw); the route starts there.
    let yaw = acres_scenario::load(sc.as_ref(), util::repo().join("scenarios/maps").as_ref())
        .expect("scenario")
        .start_pose()
        .yaw;
    let t_s = 1.0;
    let obs_ready = poll(Duration::from_secs(20), || {
        odom_pub.publish(odom(t_s, yaw, 0.0));
        c.pump();
        c.last_obs.clone()
    });
    assert!(obs_ready.is_some(), "the vehicle node sees odometry");
    let (_g, accepted) = c.skill.send(goal("goto", "F53"), Duration::from_secs(5)).unwrap();
    assert_eq!(accepted, Some(true), "goto accepted");
    let moving = |c: &mut Client| {
        poll(Duration::from_secs(5), || {
            cloud_pub.publish(sweep(t_s, None));
            odom_pub.publish(odom(t_s, yaw, 2.0));
            std::thread::sleep(Duration::from_millis(20));
            let mut last = None;
            while let Some(t) = c.cmd_vel.take() {
                last = Some(t);
            }
            last.filter(|t| t.linear.x > 0.0)
        })
    };
    assert!(moving(&mut c).is_some(), "the node drives on a clear sweep");
    let mut reaction_ms = Vec::with_capacity(trials);
    for _ in 0..trials {
        while c.cmd_vel.take().is_some() {}
        let blocked = sweep(t_s, Some(3.0));
        let t0 = Instant::now();
        cloud_pub.publish(blocked);
        let zero = poll(Duration::from_secs(2), || c.cmd_vel.take().filter(|t| t.linear.x == 0.0));
        if zero.is_some() {
            reaction_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        assert!(moving(&mut c).is_some(), "the hold releases on a clear sweep");
    }
    reaction_ms.sort_by(f64::total_cmp);
    let n = reaction_ms.len();
    println!("shield reaction (sweep with an obstacle 3 m ahead -> zero /cmd_vel), {n} of {trials} trials:");
    println!(
        "  p50 {:.3} ms   p99 {:.3} ms   max {:.3} ms",
        percentile(&reaction_ms, 0.5),
        percentile(&reaction_ms, 0.99),
        reaction_ms[n - 1]
    );

    // CPU per sweep: 10 s of 14,400-point sweeps at 10 Hz with odometry at 20 Hz.
    let pid = veh.child.id();
    let cpu0 = cpu_s(pid);
    let start = Instant::now();
    let mut sweeps = 0u32;
    let mut k = 0u32;
    while start.elapsed() < Duration::from_secs(10) {
        let due = start + Duration::from_millis(50 * u64::from(k));
        while Instant::now() < due {
            std::thread::sleep(Duration::from_micros(200));
        }
        odom_pub.publish(odom(t_s, yaw, 2.0));
        if k.is_multiple_of(2) {
            cloud_pub.publish(sweep(t_s, None));
            sweeps += 1;
        }
        k += 1;
        while c.cmd_vel.take().is_some() {}
        c.pump();
    }
    let cpu = cpu_s(pid) - cpu0;
    let wall = start.elapsed().as_secs_f64();
    println!("vehicle node CPU, 14,400-point sweeps at 10 Hz + odometry at 20 Hz for {wall:.1} s:");
    println!(
        "  {:.2} ms CPU per sweep ({sweeps} sweeps), {:.1} % of one core",
        cpu * 1e3 / f64::from(sweeps),
        100.0 * cpu / wall
    );
}
