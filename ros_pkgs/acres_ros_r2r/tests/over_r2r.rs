//! The r2r backend against the RustDDS nodes, over real DDS between rmw_fastrtps_cpp and RustDDS
//! (loopback, private network namespace): the core node's /clock, /odom and /lidar/points read
//! and /cmd_vel driving it (with the cmd_timeout_s stop); the vehicle node fed /clock and /odom by
//! r2r, its /acres/observation read through r2r with the rosidl-generated type support; the
//! vehicle node's /acres/skill driven by an r2r (rcl_action) client: goto to success with
//! feedback, an unknown skill rejected; heartbeats from r2r then silence → the vehicle node's
//! on_cancel; an r2r node with use_sim_time following the core node's /clock.
//!
//! NETWORK SAFETY: every test is `#[ignore]`d (needs a private network namespace) and fails
//! outside one; `tools/ros_test.sh` runs them under `unshare -n` with `--include-ignored`.

use std::future::Future;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use acres_msgs::acres_interfaces::{Heartbeat, Observation, SkillEvent};
use acres_msgs::builtin_interfaces::Time;
use acres_msgs::geometry_msgs::{Twist, Vector3};
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::rosgraph_msgs::Clock;
use acres_msgs::sensor_msgs::PointCloud2;
use acres_ros_r2r::{Qos, R2rNode};
use futures::{FutureExt, StreamExt};
use r2r::acres_interfaces::action::Skill;

const NETNS: &str = "needs a private network namespace: run by tools/ros_test.sh under unshare -n";

fn require_netns() {
    let dev = std::fs::read_to_string("/proc/self/net/dev").unwrap_or_default();
    let ifaces: Vec<_> = dev.lines().skip(2).filter_map(|l| l.split(':').next()).map(str::trim).collect();
    assert_eq!(ifaces, ["lo"], "REFUSED: {NETNS}");
    assert_eq!(
        std::env::var("ROS_AUTOMATIC_DISCOVERY_RANGE").as_deref(),
        Ok("LOCALHOST"),
        "REFUSED: ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST is not set"
    );
}

/// A node process, killed and reaped on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn node(which: &str, args: &[&str]) -> Proc {
    let exe = std::env::var_os("ACRES_BIN_DIR")
        .map_or_else(|| repo().join("target/debug"), PathBuf::from)
        .join(format!("acres_{which}_node"));
    assert!(exe.exists(), "{} is not built: cargo build -p acres_core -p acres_vehicle", exe.display());
    let child = Command::new(&exe)
        .arg("--ros-args")
        .args(args)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("RUST_LOG", "warn,rustdds=off")
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
    Proc(child)
}

fn scenario() -> String {
    repo().join("scenarios/t1_01_one_field.json").display().to_string()
}

/// Spins `n` until `f` gives something, up to `timeout`.
fn spin_until<T>(n: &mut R2rNode, timeout: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        n.spin_once(Duration::from_millis(10));
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not within {timeout:?}");
    }
}

#[test]
#[ignore = "needs a private network namespace: run by tools/ros_test.sh under unshare -n"]
fn r2r_reads_the_core_node_and_drives_it_with_cmd_vel() {
    require_netns();
    let sc = scenario();
    let _core =
        node("core", &["-p", &format!("scenario:={sc}"), "-p", "rate:=1.0", "-p", "cmd_timeout_s:=0.5"]);
    let mut n = R2rNode::new("acres_r2r_test", "").unwrap();
    let mut clock = n.subscription::<Clock>("/clock", Qos::Clock).unwrap();
    let mut odom = n.subscription::<Odometry>("/odom", Qos::Default).unwrap();
    let mut cloud = n.subscription::<PointCloud2>("/lidar/points", Qos::SensorData).unwrap();
    let mut cmd = n.publisher::<Twist>("/cmd_vel", Qos::Default).unwrap();

    let c = spin_until(&mut n, Duration::from_secs(30), "/clock", || clock.latest());
    assert!(f64::from(c.clock.sec) < 1e6, "simulated time: {c:?}");
    let o = spin_until(&mut n, Duration::from_secs(10), "/odom", || odom.latest());
    assert_eq!((o.header.frame_id.as_str(), o.child_frame_id.as_str()), ("odom", "base_link"));
    let pc = spin_until(&mut n, Duration::from_secs(10), "/lidar/points", || cloud.latest());
    assert_eq!((pc.header.frame_id.as_str(), pc.point_step, pc.height), ("lidar", 16, 1));
    assert!(pc.width > 1000 && pc.data.len() == 16 * pc.width as usize, "a multi-ring sweep: {}", pc.width);
    assert_eq!(pc.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["x", "y", "z", "intensity"]);

    let drive =
        Twist { linear: Vector3 { x: 3.0, y: 0.0, z: 0.0 }, angular: Vector3 { x: 0.0, y: 0.0, z: 0.0 } };
    let mut last_cmd = Instant::now() - Duration::from_secs(1);
    let mut speed = 0.0;
    spin_until(&mut n, Duration::from_secs(20), "fresh /cmd_vel from r2r drives", || {
        if last_cmd.elapsed() >= Duration::from_millis(100) {
            cmd.publish(&drive).unwrap();
            last_cmd = Instant::now();
        }
        if let Some(o) = odom.latest() {
            speed = o.twist.twist.linear.x;
        }
        (speed > 1.0).then_some(())
    });
    spin_until(&mut n, Duration::from_secs(15), "a stale /cmd_vel stops the vehicle", || {
        if let Some(o) = odom.latest() {
            speed = o.twist.twist.linear.x;
        }
        (speed.abs() < 0.01).then_some(())
    });
    assert_eq!((clock.decode_errors(), odom.decode_errors(), cloud.decode_errors()), (0, 0, 0));
}

#[test]
#[ignore = "needs a private network namespace: run by tools/ros_test.sh under unshare -n"]
fn r2r_feeds_the_vehicle_node_and_reads_its_observation() {
    require_netns();
    let sc = scenario();
    let _veh = node("vehicle", &["-p", &format!("scenario:={sc}"), "-p", "use_sim_time:=true"]);
    let mut n = R2rNode::new("acres_r2r_odometry", "").unwrap();
    let mut clock = n.publisher::<Clock>("/clock", Qos::Clock).unwrap();
    let mut odom = n.publisher::<Odometry>("/odom", Qos::Default).unwrap();
    let mut obs = n.subscription::<Observation>("/acres/observation", Qos::Default).unwrap();
    let mut t_s = 1000.0;
    let mut last = Instant::now() - Duration::from_secs(1);
    let o = spin_until(&mut n, Duration::from_secs(30), "/acres/observation", || {
        if last.elapsed() >= Duration::from_millis(50) {
            last = Instant::now();
            t_s += 0.05;
            let stamp = Time { sec: t_s as i32, nanosec: ((t_s % 1.0) * 1e9) as u32 };
            clock.publish(&Clock { clock: stamp }).unwrap();
            let mut m = Odometry::default();
            m.header.stamp = stamp;
            m.header.frame_id = "odom".into();
            m.child_frame_id = "base_link".into();
            m.pose.pose.position.x = 12.5;
            m.pose.pose.position.y = -3.0;
            m.pose.pose.orientation.w = 1.0;
            odom.publish(&m).unwrap();
        }
        obs.latest()
    });
    assert_eq!((o.x_m, o.y_m), (12.5, -3.0), "the vehicle node took r2r's /odom");
    assert_eq!(o.header.frame_id, "map");
    let stamp_s = f64::from(o.header.stamp.sec) + f64::from(o.header.stamp.nanosec) * 1e-9;
    assert!((1000.0..2000.0).contains(&stamp_s), "stamped with r2r's /clock (use_sim_time): {stamp_s}");
    assert_eq!((o.state.as_str(), o.skill_id), ("idle", 0));
    assert_eq!(obs.decode_errors(), 0);
}

/// Spins `n` until `fut` is ready, up to `timeout`.
fn spin_on<F: Future + Unpin>(n: &mut R2rNode, mut fut: F, timeout: Duration, what: &str) -> F::Output {
    spin_until(n, timeout, what, || (&mut fut).now_or_never())
}

fn skill_goal(skill: &str, field: &str) -> Skill::Goal {
    Skill::Goal {
        skill: skill.into(),
        place: String::new(),
        field: field.into(),
        seconds: f64::NAN,
        speed_cap_mps: f64::NAN,
    }
}

#[test]
#[ignore = "needs a private network namespace: run by tools/ros_test.sh under unshare -n"]
fn an_r2r_action_client_drives_the_vehicle_nodes_skill() {
    require_netns();
    let sc = scenario();
    let _core = node("core", &["-p", &format!("scenario:={sc}"), "-p", "rate:=40.0"]);
    let _veh = node("vehicle", &["-p", &format!("scenario:={sc}"), "-p", "use_sim_time:=true"]);
    let mut n = R2rNode::new("acres_r2r_skill_client", "").unwrap();
    let mut obs = n.subscription::<Observation>("/acres/observation", Qos::Default).unwrap();
    let client = n.r2r().create_action_client::<Skill::Action>("/acres/skill").unwrap();
    let available = r2r::Node::is_available(&client).unwrap();
    spin_on(&mut n, Box::pin(available), Duration::from_secs(30), "the /acres/skill server").unwrap();
    spin_until(&mut n, Duration::from_secs(30), "an observation (odometry)", || obs.latest());

    // An unknown skill: the goal is rejected.
    let sent = client.send_goal_request(skill_goal("fly", "")).unwrap();
    let answer = spin_on(&mut n, Box::pin(sent), Duration::from_secs(10), "the answer to fly");
    assert!(matches!(answer, Err(r2r::Error::RCL_RET_ACTION_GOAL_REJECTED)), "fly is rejected");

    // goto F53: accepted, feedback while it runs, succeeded.
    let sent = client.send_goal_request(skill_goal("goto", "F53")).unwrap();
    let (_goal, result, mut feedback) =
        spin_on(&mut n, Box::pin(sent), Duration::from_secs(10), "the answer to goto")
            .expect("goto accepted");
    let mut result = Box::pin(result);
    let mut progress = Vec::new();
    let (status, res) = spin_until(&mut n, Duration::from_secs(120), "the goto's result", || {
        while let Some(Some(f)) = feedback.next().now_or_never() {
            progress.push(f.progress);
        }
        (&mut result).now_or_never()
    })
    .expect("a result");
    assert_eq!(status, r2r::GoalStatus::Succeeded, "{res:?}");
    assert_eq!(res.code, "succeeded");
    assert!(res.skill_id > 0);
    assert!(!progress.is_empty(), "feedback while the goto ran");
    assert!(progress.iter().all(|p| (0.0..=1.0).contains(p)), "{progress:?}");
    assert!(progress.windows(2).all(|w| w[0] <= w[1]), "progress rises: {progress:?}");
}

/// Spins `n` until its ROS time passes `min_s`, up to `timeout`; that time.
fn spin_until_time(n: &mut R2rNode, min_s: f64, timeout: Duration) -> f64 {
    let deadline = Instant::now() + timeout;
    loop {
        n.spin_once(Duration::from_millis(10));
        let t = n.now_s().unwrap();
        if t > min_s {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "the r2r clock did not pass {min_s} s within {timeout:?} (at {t})"
        );
    }
}

#[test]
#[ignore = "needs a private network namespace: run by tools/ros_test.sh under unshare -n"]
fn an_r2r_node_with_use_sim_time_follows_the_core_clock() {
    require_netns();
    let sc = scenario();
    let _core = node("core", &["-p", &format!("scenario:={sc}"), "-p", "rate:=4.0"]);
    let mut n = R2rNode::new("acres_r2r_clock_reader", "").unwrap();
    n.use_sim_time().unwrap();
    let t1 = spin_until_time(&mut n, 0.0, Duration::from_secs(30));
    let w1 = Instant::now();
    // Simulated time: near 0 at the start (not the wall clock), 4 simulated s per wall s.
    assert!(t1 < 1e6, "simulated, not wall time: {t1}");
    let t2 = spin_until_time(&mut n, t1 + 4.0, Duration::from_secs(10));
    let ratio = (t2 - t1) / w1.elapsed().as_secs_f64();
    assert!((2.5..6.0).contains(&ratio), "4 simulated s per wall s: {t1} -> {t2}, ratio {ratio:.2}");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/ros_test.sh under unshare -n"]
fn beats_from_r2r_then_silence_apply_the_vehicle_nodes_on_cancel() {
    require_netns();
    let sc = scenario();
    let _core = node("core", &["-p", &format!("scenario:={sc}"), "-p", "rate:=1.0"]);
    let _veh = node(
        "vehicle",
        &[
            "-p",
            &format!("scenario:={sc}"),
            "-p",
            "use_sim_time:=true",
            "-p",
            "heartbeat_timeout_s:=0.5",
            "-p",
            "on_cancel:=stop",
        ],
    );
    let mut n = R2rNode::new("acres_r2r_beats", "").unwrap();
    let mut obs = n.subscription::<Observation>("/acres/observation", Qos::Default).unwrap();
    let mut events = n.subscription::<SkillEvent>("/acres/events", Qos::Default).unwrap();
    let mut beat = n.publisher::<Heartbeat>("/acres/skill/heartbeat", Qos::Default).unwrap();
    let client = n.r2r().create_action_client::<Skill::Action>("/acres/skill").unwrap();
    let available = r2r::Node::is_available(&client).unwrap();
    spin_on(&mut n, Box::pin(available), Duration::from_secs(30), "the /acres/skill server").unwrap();
    spin_until(&mut n, Duration::from_secs(30), "an observation (odometry)", || obs.latest());
    let sent = client.send_goal_request(skill_goal("goto", "F53")).unwrap();
    let (_goal, result, _feedback) =
        spin_on(&mut n, Box::pin(sent), Duration::from_secs(10), "the answer to goto")
            .expect("goto accepted");
    // Beats every 0.1 s for 2 s: the skill keeps running.
    let mut seen = Vec::new();
    let mut seq = 0;
    let until = Instant::now() + Duration::from_secs(2);
    let mut last_beat = Instant::now() - Duration::from_secs(1);
    while Instant::now() < until {
        if last_beat.elapsed() >= Duration::from_millis(100) {
            seq += 1;
            let stamp = Time { sec: 0, nanosec: 0 };
            beat.publish(&Heartbeat { stamp, seq, sender: "r2r".into() }).unwrap();
            last_beat = Instant::now();
        }
        n.spin_once(Duration::from_millis(10));
        while let Some(e) = events.take() {
            seen.push(e);
        }
    }
    assert!(!seen.iter().any(|e| e.event == "skill_ended"), "no end while beats come: {seen:?}");
    // Silence: on_cancel (stop) after heartbeat_timeout_s, by the wall clock.
    let silent_from = last_beat;
    let ended = spin_until(&mut n, Duration::from_secs(5), "skill_ended after the beats stop", || {
        events.take().filter(|e| e.event == "skill_ended")
    });
    let after_s = silent_from.elapsed().as_secs_f64();
    assert_eq!(ended.code, "stopped");
    assert!(ended.cause.contains("heartbeat lost"), "{:?}", ended.cause);
    assert!((0.4..=0.9).contains(&after_s), "on_cancel {after_s:.3} s after the last beat (timeout 0.5 s)");
    let (status, res) =
        spin_on(&mut n, Box::pin(result), Duration::from_secs(10), "the goto's result").unwrap();
    assert_eq!((status, res.code.as_str()), (r2r::GoalStatus::Aborted, "stopped"));
}
