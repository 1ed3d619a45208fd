//! The two backends side by side in one run (issue 19, item 6; a benchmark, not a test): the DDS
//! hop alone of a 14,400-point `sensor_msgs/PointCloud2` sweep (16 bytes a point, as the core
//! node publishes it) from one process to another, under `SensorDataQoS`, for
//! ros2-client/RustDDS (`acres_ros`) and for r2r/rcl/Fast DDS (this crate): one-way latency
//! (stamp at publish → taken by the reader, the same host clock) p50/p99/max over 1,000 sweeps
//! at 50 Hz, sweeps lost, and the reader's and the writer's CPU per sweep.
//!
//! ```sh
//! . tools/ros_env.sh && unshare -n sh -c 'ip link set lo up; ip link set lo multicast on;
//!   export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST; exec cargo bench \
//!   --manifest-path ros_pkgs/acres_ros_r2r/Cargo.toml --target-dir target --features bench --bench backends'
//! ```
//!
//! NETWORK SAFETY: it refuses to run outside a private network namespace with `lo` alone, and
//! without `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`. The reader is this executable again
//! (`--role reader`).
//!
//! Not measured here (the issue's other figures): the sweep latency through the bridge and the
//! shield's reaction on r2r, which need the nodes and the bridge on this backend (not there yet).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use acres_msgs::sensor_msgs::PointCloud2;
use acres_msgs::std_msgs::Header;
use acres_ros::env::{DiscoveryRange, RosEnv};
use acres_ros::node::{stamp, wall_s};
use acres_ros::{qos, RosArgs, RosNode};
use acres_ros_r2r::{Qos, R2rNode};

const TOPIC: &str = "/bench/points";
const POINTS: usize = 14_400;
const SWEEPS: usize = 1_000;
const PERIOD: Duration = Duration::from_millis(20);
/// Sweeps sent before the measured ones, while discovery settles (marked `warm` in frame_id).
const WARM: usize = 100;

/// CPU time of this process so far (user + system), s, from /proc/self/stat (clock ticks, 100 Hz).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = after.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

fn cloud(frame: &str) -> PointCloud2 {
    let pts: Vec<[f32; 4]> = (0..POINTS)
        .map(|i| {
            let a = i as f32 * 0.0123;
            [10.0 * a.cos(), 10.0 * a.sin(), -2.2 + (i % 16) as f32 * 0.1, 1.0]
        })
        .collect();
    acres_ros::cloud::to_cloud(Header { stamp: stamp(wall_s()), frame_id: frame.into() }, &pts)
}

fn rustdds_node(name: &str) -> RosNode {
    let args = RosArgs::parse(["bench"], name).expect("args");
    RosNode::new(args, RosEnv { domain_id: 0, range: DiscoveryRange::Localhost }).expect("RustDDS node")
}

/// Reads sweeps until `SWEEPS` measured ones came or none for 3 s; prints "lat_us..." and a summary.
fn reader(backend: &str) {
    let mut lat_us = Vec::with_capacity(SWEEPS);
    let mut last = Instant::now();
    let mut cpu0 = None;
    let mut on_msg = |m: PointCloud2, lat_us: &mut Vec<f64>| {
        let t = f64::from(m.header.stamp.sec) + f64::from(m.header.stamp.nanosec) * 1e-9;
        let now = wall_s();
        assert_eq!(m.data.len(), POINTS * 16);
        if m.header.frame_id == "m" {
            cpu0.get_or_insert_with(cpu_s);
            lat_us.push((now - t) * 1e6);
        }
    };
    println!("ready");
    match backend {
        "rustdds" => {
            // As the nodes wait: on the subscription's mio source (acres_ros::Waiter), no polling.
            let mut n = rustdds_node("bench_reader");
            let mut sub = n.subscription::<PointCloud2>(TOPIC, qos::sensor_data()).expect("sub");
            let mut waiter = acres_ros::Waiter::new().expect("waiter");
            waiter.watch(&mut sub).expect("watch");
            while lat_us.len() < SWEEPS && last.elapsed() < Duration::from_secs(3) {
                waiter.wait(Duration::from_millis(5));
                while let Some(m) = sub.take() {
                    on_msg(m, &mut lat_us);
                    last = Instant::now();
                }
            }
        }
        _ => {
            let mut n = R2rNode::new("bench_reader", "").expect("r2r node");
            let mut sub = n.subscription::<PointCloud2>(TOPIC, Qos::SensorData).expect("sub");
            while lat_us.len() < SWEEPS && last.elapsed() < Duration::from_secs(3) {
                n.spin_once(Duration::from_millis(5));
                while let Some(m) = sub.take() {
                    on_msg(m, &mut lat_us);
                    last = Instant::now();
                }
            }
        }
    }
    let cpu = cpu0.map_or(0.0, |c| cpu_s() - c);
    let got = lat_us.len();
    lat_us.sort_by(f64::total_cmp);
    let q =
        |p: f64| if got == 0 { f64::NAN } else { lat_us[((got as f64 - 1.0) * p).round() as usize] / 1e3 };
    println!(
        "result {got} {:.3} {:.3} {:.3} {:.3}",
        q(0.5),
        q(0.99),
        q(1.0),
        if got == 0 { f64::NAN } else { cpu * 1e3 / got as f64 }
    );
}

/// One backend: starts the reader, publishes WARM + SWEEPS sweeps, returns the summary line.
fn run(exe: &std::path::Path, backend: &str, label: &str) -> String {
    let mut child = Command::new(exe)
        .args(["--role", "reader", "--backend", backend])
        .stdout(Stdio::piped())
        .spawn()
        .expect("reader");
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    assert_eq!(out.next().and_then(Result::ok).as_deref(), Some("ready"));
    let mut publish: Box<dyn FnMut(&PointCloud2)> = match backend {
        "rustdds" => {
            let mut n = rustdds_node("bench_writer");
            let p = n.publisher::<PointCloud2>(TOPIC, qos::sensor_data()).expect("pub");
            Box::new(move |m| {
                let _keep = &n;
                p.publish(m.clone())
            })
        }
        _ => {
            let mut n = R2rNode::new("bench_writer", "").expect("r2r node");
            let mut p = n.publisher::<PointCloud2>(TOPIC, Qos::SensorData).expect("pub");
            Box::new(move |m| {
                n.spin_once(Duration::ZERO);
                p.publish(m).expect("publish")
            })
        }
    };
    let mut warm = cloud("warm");
    let mut measured = cloud("m");
    let mut cpu0 = 0.0;
    let start = Instant::now();
    for i in 0..WARM + SWEEPS {
        if i == WARM {
            cpu0 = cpu_s();
        }
        let due = start + PERIOD * i as u32;
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        let m = if i < WARM { &mut warm } else { &mut measured };
        m.header.stamp = stamp(wall_s());
        publish(m);
    }
    let writer_cpu_ms = (cpu_s() - cpu0) * 1e3 / SWEEPS as f64;
    let line = out.find_map(|l| l.ok().filter(|l| l.starts_with("result "))).unwrap_or_default();
    let _ = child.wait();
    let f: Vec<&str> = line.split_whitespace().collect();
    let got: usize = f.get(1).and_then(|x| x.parse().ok()).unwrap_or(0);
    format!(
        "{label:<22} {:>9} {:>9} {:>9} {:>6} {:>14} {:>14.3}",
        f.get(2).unwrap_or(&"-"),
        f.get(3).unwrap_or(&"-"),
        f.get(4).unwrap_or(&"-"),
        SWEEPS - got.min(SWEEPS),
        f.get(5).unwrap_or(&"-"),
        writer_cpu_ms
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let dev = std::fs::read_to_string("/proc/self/net/dev").unwrap_or_default();
    let ifaces: Vec<_> = dev.lines().skip(2).filter_map(|l| l.split(':').next()).map(str::trim).collect();
    if ifaces != ["lo"] || std::env::var("ROS_AUTOMATIC_DISCOVERY_RANGE").as_deref() != Ok("LOCALHOST") {
        eprintln!("REFUSED: run inside unshare -n with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (see the module docs)");
        std::process::exit(2);
    }
    if arg("--role").as_deref() == Some("reader") {
        reader(&arg("--backend").unwrap_or_default());
        return;
    }
    let exe = std::env::current_exe().expect("exe");
    println!(
        "DDS hop, {POINTS}-point PointCloud2 ({} bytes), {SWEEPS} sweeps at 50 Hz, SensorDataQoS, two processes",
        POINTS * 16
    );
    println!(
        "{:<22} {:>9} {:>9} {:>9} {:>6} {:>14} {:>14}",
        "backend", "p50 ms", "p99 ms", "max ms", "lost", "reader CPU ms", "writer CPU ms"
    );
    for backend in ["rustdds", "r2r"] {
        let label = if backend == "rustdds" { "ros2-client/RustDDS" } else { "r2r/Fast DDS" };
        println!("{}", run(&exe, backend, label));
    }
}
