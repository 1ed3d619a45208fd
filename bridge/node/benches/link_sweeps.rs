//! The link's benchmark through the real bridge process: 14,400-point sweeps at 10 Hz (each
//! followed by an observation, as the vehicle node's odometry follows the core's sweep; more
//! observations at 20 Hz), a link client that attaches, beats every 0.2 s and builds each scan
//! with the vehicle's scan function. Prints (asserts nothing): sweep latency from publish to the
//! scan (p50, p99), beat period jitter at `/acres/skill/heartbeat` (p99), the bridge's CPU
//! share, bytes per sweep on the socket, and the link-loss detection time of the harness's link
//! session when the bridge freezes (SIGSTOP: no pong, no step).
//!
//! NETWORK SAFETY: DDS participants (this process and the bridge): run only inside a private
//! network namespace, loopback-only:
//!
//! ```text
//! unshare -n sh -c 'ip link set lo up; ip link set lo multicast on; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST exec cargo bench -p acres-bridge --bench link_sweeps'
//! ```

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use acres_link_protocol as link;
use acres_msgs::acres_interfaces::{Heartbeat, Observation};
use acres_msgs::sensor_msgs::PointCloud2;
use acres_msgs::std_msgs::Header;
use acres_ros::node::{stamp, wall_s};
use acres_ros::{qos, RosArgs, RosEnv, RosNode};

const PORT: u16 = 5661;
const SWEEPS: usize = 200;

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn cpu_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = s.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(11).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0)
}

fn main() {
    if !acres_ros::env::in_loopback_only_netns() {
        eprintln!("link_sweeps: not inside a private network namespace; run it under unshare -n (see the file's docs)");
        return;
    }
    let mut bridge = Command::new(env!("CARGO_BIN_EXE_acres_bridge"))
        .args(["--ros-args", "-p", "host:=127.0.0.1", "-p", &format!("port:={PORT}")])
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DISTRO", "jazzy")
        .env("RUST_LOG", "warn,rustdds=off,ros2_client=error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("bridge");
    let pid = bridge.id();
    let args = RosArgs::parse(["bench"], "acres_link_bench").unwrap();
    let env = RosEnv { domain_id: 0, range: acres_ros::env::DiscoveryRange::Localhost };
    let mut node = RosNode::new(args, env).unwrap();
    let points_pub = node.publisher::<PointCloud2>("/lidar/points", qos::sensor_data()).unwrap();
    {
        let pts: Vec<[f32; 4]> = (0..14_400).map(|i| [i as f32, 1.0, 0.5, 0.5]).collect();
        let args = RosArgs::parse(["probe"], "acres_link_probe").unwrap();
        let mut probe = RosNode::new(args, env).unwrap();
        let sub = probe.subscription::<PointCloud2>("/lidar/points", qos::sensor_data()).unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let mut lat = Vec::new();
        for _ in 0..100 {
            points_pub.publish(acres_ros::cloud::to_cloud(
                Header { stamp: stamp(wall_s()), frame_id: "l".into() },
                &pts,
            ));
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_millis(100) {
                if let Some(pc) = sub.take() {
                    let t = f64::from(pc.header.stamp.sec) + f64::from(pc.header.stamp.nanosec) * 1e-9;
                    lat.push((wall_s() - t) * 1000.0);
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        println!(
            "  DDS alone: {} of 100, p50 {:.2} ms p99 {:.2} ms",
            lat.len(),
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99)
        );
    }
    let obs_pub = node.publisher::<Observation>("/acres/observation", qos::default_profile()).unwrap();
    let beats_sub = node.subscription::<Heartbeat>("/acres/skill/heartbeat", qos::default_profile()).unwrap();
    let pts: Vec<[f32; 4]> = (0..14_400)
        .map(|i| {
            let a = i as f32 * 0.0273;
            [20.0 * a.cos(), 20.0 * a.sin(), -1.0 + (i % 16) as f32 * 0.1, 0.5]
        })
        .collect();
    // Attach.
    let s = loop {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", PORT)) {
            break s;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    s.set_nodelay(true).unwrap();
    let mut r = BufReader::with_capacity(1 << 20, s.try_clone().unwrap());
    let mut w = s.try_clone().unwrap();
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let attach = link::FromHarness::Attach(link::Attach {
        version: link::PROTOCOL_VERSION,
        harness: "bench".into(),
        token: None,
    });
    w.write_all(link::encode(&attach).as_bytes()).unwrap();
    line.clear();
    r.read_line(&mut line).unwrap();
    // Beats from their own thread.
    let mut bw = s.try_clone().unwrap();
    std::thread::spawn(move || {
        let start = Instant::now();
        for n in 1.. {
            let m = link::FromHarness::Beat(link::Beat { n });
            if bw.write_all(link::encode(&m).as_bytes()).is_err() {
                return;
            }
            let due = start + Duration::from_secs_f64(0.2 * n as f64);
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
    });
    // The reader: latency of each sweep from its stamp (publish time) to its scan.
    let reader = std::thread::spawn(move || {
        let (mut lat_ms, mut sweep_bytes, mut dropped) = (Vec::new(), Vec::new(), 0u64);
        let mut line = String::new();
        while lat_ms.len() < SWEEPS {
            line.clear();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            if let Ok(link::FromBridge::Step(st)) = link::decode::<link::FromBridge>(&line) {
                dropped = st.dropped_sweeps;
                if let Some(sw) = st.sweep {
                    let p = sw.unpack().unwrap();
                    let _scan = acres_vehicle::scan::scan(&p, &acres_vehicle::scan::ScanConfig::default());
                    lat_ms.push((wall_s() - sw.t_s) * 1000.0);
                    sweep_bytes.push(line.len() as f64);
                }
            }
        }
        (lat_ms, sweep_bytes, dropped)
    });
    std::thread::sleep(Duration::from_millis(1500)); // discovery
    while beats_sub.take().is_some() {} // beats queued before the measurement
    let t_cpu0 = cpu_ticks(pid);
    let wall0 = Instant::now();
    let mut beat_at = Vec::new();
    let start = Instant::now();
    for k in 0..(SWEEPS + 20) * 2 {
        let due = start + Duration::from_millis(50 * k as u64);
        while Instant::now() < due {
            while beats_sub.take().is_some() {
                beat_at.push(Instant::now());
            }
            std::thread::sleep(Duration::from_micros(300));
        }
        let now = wall_s();
        if k % 2 == 0 {
            points_pub.publish(acres_ros::cloud::to_cloud(
                Header { stamp: stamp(now), frame_id: "lidar".into() },
                &pts,
            ));
        }
        obs_pub.publish(Observation {
            header: Header { stamp: stamp(wall_s()), frame_id: "odom".into() },
            ..Default::default()
        });
        if reader.is_finished() {
            break;
        }
    }
    let secs = wall0.elapsed().as_secs_f64();
    let tick = 100.0; // USER_HZ
    let cpu_share = (cpu_ticks(pid) - t_cpu0) as f64 / tick / secs;
    let (mut lat, mut bytes, dropped) = reader.join().unwrap();
    let mut periods: Vec<f64> =
        beat_at.windows(2).map(|w| ((w[1] - w[0]).as_secs_f64() - 0.2).abs() * 1000.0).collect();
    println!("link_sweeps: {} sweeps of 14,400 points at 10 Hz through acres_bridge", lat.len());
    if !lat.is_empty() {
        println!(
            "  sweep latency publish → scan: p50 {:.2} ms, p99 {:.2} ms",
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99)
        );
        println!("  bytes per sweep step on the socket: {:.0}", pct(&mut bytes, 0.5));
    }
    if !periods.is_empty() {
        let p50 = pct(&mut periods, 0.5);
        println!(
            "  beat period jitter at /acres/skill/heartbeat: p50 {p50:.2} ms, p99 {:.2} ms ({} beats)",
            pct(&mut periods, 0.99),
            beat_at.len()
        );
    }
    println!("  sweeps dropped by the bridge: {dropped}");
    println!("  bridge CPU share: {:.1} % of one core", cpu_share * 100.0);
    // Link-loss detection: the harness's link session against a frozen bridge.
    let end = link::FromHarness::End(link::End { cause: "bench".into() });
    let _ = w.write_all(link::encode(&end).as_bytes());
    let _ = s.shutdown(std::net::Shutdown::Both);
    std::thread::sleep(Duration::from_millis(300));
    let session = acres_harness::link::Session::attach("127.0.0.1", PORT, None, 2.0, Duration::from_secs(5));
    match session {
        Ok(sess) => {
            // Keep steps coming so that only the freeze is detected.
            for _ in 0..25 {
                let h = Header { stamp: stamp(wall_s()), frame_id: "odom".into() };
                obs_pub.publish(Observation { header: h, ..Default::default() });
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = Command::new("kill").args(["-STOP", &pid.to_string()]).status();
            let frozen = Instant::now();
            while sess.shared.lost().is_none() && frozen.elapsed() < Duration::from_secs(10) {
                obs_pub.publish(Observation {
                    header: Header { stamp: stamp(wall_s()), frame_id: "odom".into() },
                    ..Default::default()
                });
                std::thread::sleep(Duration::from_millis(1));
            }
            println!(
                "  link-loss detection (bridge frozen): {:.3} s ({})",
                frozen.elapsed().as_secs_f64(),
                sess.shared.lost().unwrap_or_default()
            );
            let _ = Command::new("kill").args(["-CONT", &pid.to_string()]).status();
        }
        Err(e) => println!("  link-loss detection: could not attach ({e})"),
    }
    let _ = bridge.kill();
    let _ = bridge.wait();
}
