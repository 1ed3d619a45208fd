//! The link's benchmark through the real bridge process: 14,400-point sweeps at 10 Hz (each
//! followed by an observation, as the vehicle node's odometry follows the core's sweep; more
//! observations at 20 Hz) to the harness's own link session (`acres_harness::world::link::Session`:
//! its reader thread decodes each `sweep` line and builds the scan with the vehicle's scan
//! function; its keeper beats every 0.2 s), in the encoding `ACRES_BENCH_SWEEPS` names (default
//! `mm_zstd`, the harness's default). Prints (asserts nothing):
//!
//! - DDS alone: the same sweeps from publish to a subscriber of this process (the floor the link
//!   stands on), measured before the bridge starts;
//! - sweep latency from publish to the harness's scan (p50, p99, max): the scan is made on the
//!   session's reader thread, and the time is taken there (`Received::at_wall_s`); the same to
//!   when this process's consumer thread takes it from the session's channel is printed beside;
//! - beat period jitter at `/acres/skill/heartbeat` (p50, p99);
//! - the bridge's CPU share, bytes per sweep line on the socket, sweeps dropped;
//! - the CPU of one sweep on each side (the bridge's pack and sweep line; the harness's decode,
//!   unpack and scan), measured in this process;
//! - link-loss detection: the session against the bridge frozen (SIGSTOP: no pong, no step);
//! - the load average, since the figures depend on what else runs.
//!
//! NETWORK SAFETY: DDS participants (this process and the bridge): run only inside a private
//! network namespace, loopback-only:
//!
//! ```text
//! unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST exec cargo bench -p acres_bridge --bench link_sweeps'
//! ```

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use acres_link_protocol as link;
use acres_msgs::acres_interfaces::{Heartbeat, Observation};
use acres_msgs::sensor_msgs::PointCloud2;
use acres_msgs::std_msgs::Header;
use acres_ros::node::{stamp, wall_s};
use acres_ros::{qos, RosArgs, RosEnv, RosNode};
use acres_vehicle::scan::ScanConfig;

const PORT: u16 = 5661;
const SWEEPS: usize = 1000;
const PROBE_SWEEPS: usize = 300;

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

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn cloud(pts: &[[f32; 4]]) -> PointCloud2 {
    acres_ros::cloud::to_cloud(Header { stamp: stamp(wall_s()), frame_id: "lidar".into() }, pts)
}

fn secs(h: &Header) -> f64 {
    h.stamp.as_secs_f64()
}

fn observation() -> Observation {
    Observation { header: Header { stamp: stamp(wall_s()), frame_id: "odom".into() }, ..Default::default() }
}

/// The sweeps from publish to a subscriber of this process, with no bridge running. Both
/// nodes are its own and gone when it returns: a publisher keeps sending to a reader it matched
/// until that reader's lease runs out, so the link's publisher must never have met the probe.
fn dds_alone(env: RosEnv, pts: &[[f32; 4]]) {
    let args = RosArgs::parse(["probe_pub"], "acres_link_probe_pub").unwrap();
    let mut probe_pub = RosNode::new(args, env).unwrap();
    let points_pub = &probe_pub.publisher::<PointCloud2>("/lidar/points", qos::sensor_data()).unwrap();
    let args = RosArgs::parse(["probe"], "acres_link_probe").unwrap();
    let mut probe = RosNode::new(args, env).unwrap();
    let sub = probe.subscription::<PointCloud2>("/lidar/points", qos::sensor_data()).unwrap();
    // Discovery: sweeps until one arrives (up to 10 s).
    let t0 = Instant::now();
    while sub.take().is_none() && t0.elapsed() < Duration::from_secs(10) {
        points_pub.publish(cloud(pts));
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(100));
    while sub.take().is_some() {}
    let mut lat = Vec::new();
    for _ in 0..PROBE_SWEEPS {
        points_pub.publish(cloud(pts));
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_millis(100) {
            if let Some(pc) = sub.take() {
                lat.push((wall_s() - secs(&pc.header)) * 1000.0);
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    if lat.is_empty() {
        return println!("  DDS alone: no sweep arrived");
    }
    println!(
        "  DDS alone (publish → a subscriber polled every 50 µs): p50 {:.2} ms, p99 {:.2} ms, {} of {PROBE_SWEEPS} arrived",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        lat.len()
    );
}

/// The encoding of the run (`ACRES_BENCH_SWEEPS`, default `mm_zstd`).
fn encoding() -> link::SweepEncoding {
    std::env::var("ACRES_BENCH_SWEEPS")
        .ok()
        .map(|w| link::SweepEncoding::parse(&w).expect("ACRES_BENCH_SWEEPS: f32, f32_zstd or mm_zstd"))
        .unwrap_or(link::SweepEncoding::MmZstd)
}

/// The CPU of one sweep on each side, in this process.
fn per_sweep_cpu(pts: &[[f32; 4]]) {
    let c = cloud(pts);
    let e = encoding();
    let time = |f: &mut dyn FnMut()| {
        let mut v: Vec<f64> = (0..50)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        pct(&mut v, 0.5)
    };
    let bridge = time(&mut || {
        let p = acres_bridge::sweeps::pack(&c, e).unwrap();
        std::hint::black_box(link::encode_sweep(&p));
    });
    let line = link::encode_sweep(&acres_bridge::sweeps::pack(&c, e).expect("the cloud packs"));
    let harness = time(&mut || {
        if let Ok(link::FromBridge::Sweep(sw)) = link::decode::<link::FromBridge>(&line) {
            std::hint::black_box(acres_harness::world::link::convert::scan_of(&sw, &ScanConfig::default()));
        }
    });
    let pack = time(&mut || {
        std::hint::black_box(acres_bridge::sweeps::pack(&c, e));
    });
    let decode = time(&mut || {
        std::hint::black_box(link::decode::<link::FromBridge>(&line).ok());
    });
    let sweep = match link::decode::<link::FromBridge>(&line) {
        Ok(link::FromBridge::Sweep(s)) => s,
        _ => panic!("the sweep line decodes"),
    };
    let unpack = time(&mut || {
        std::hint::black_box(sweep.unpack().ok());
    });
    let points = sweep.unpack().expect("the sweep unpacks");
    let scan = time(&mut || {
        std::hint::black_box(acres_vehicle::scan::scan(&points, &acres_vehicle::scan::ScanConfig::default()));
    });
    println!(
        "  CPU per sweep ({e}): bridge pack + sweep line {bridge:.3} ms (on its loop: the pack, {pack:.3} ms), harness decode + scan {harness:.3} ms (on its reader thread: line {decode:.3} ms, unpack {unpack:.3} ms, scan {scan:.3} ms); {} bytes a line",
        line.len()
    );
}

fn main() {
    if !acres_ros::env::in_loopback_only_netns() {
        eprintln!("link_sweeps: not inside a private network namespace; run it under unshare -n (see the file's docs)");
        return;
    }
    println!("link_sweeps: 14,400-point sweeps at 10 Hz, {} (load average {})", encoding(), loadavg());
    let env = RosEnv { domain_id: 0, range: acres_ros::env::DiscoveryRange::Localhost };
    let pts: Vec<[f32; 4]> = (0..14_400)
        .map(|i| {
            let a = i as f32 * 0.0273;
            [20.0 * a.cos(), 20.0 * a.sin(), -1.0 + (i % 16) as f32 * 0.1, 0.5]
        })
        .collect();
    per_sweep_cpu(&pts);
    dds_alone(env, &pts);

    let args = RosArgs::parse(["bench"], "acres_link_bench").unwrap();
    let mut node = RosNode::new(args, env).unwrap();
    let points_pub = node.publisher::<PointCloud2>("/lidar/points", qos::sensor_data()).unwrap();
    let obs_pub = node.publisher::<Observation>("/acres/observation", qos::default_profile()).unwrap();
    let mut beats_sub =
        node.subscription::<Heartbeat>("/acres/skill/heartbeat", qos::default_profile()).unwrap();
    // Beats are waited for, not polled: this process stays idle between its publishes.
    let mut waiter = acres_ros::Waiter::new().unwrap();
    waiter.watch(&mut beats_sub).unwrap();

    // TLS off and on in one run, on the same publishers: the difference is what TLS costs.
    let mut p99 = Vec::new();
    for (port, tls) in [(PORT, false), (PORT + 1, true)] {
        p99.push(through_bridge(&points_pub, &obs_pub, &mut beats_sub, &mut waiter, &pts, port, tls));
    }
    if let [Some(off), Some(on)] = p99[..] {
        println!("TLS adds {:.3} ms to the sweep latency's p99 (target <= 0.2 ms)", on - off);
    }
    println!("  load average at the end: {}", loadavg());
}

/// Sweeps through a bridge on `port` (TLS on or off) to the harness's session; prints the
/// figures; gives the sweep latency's p99, ms.
fn through_bridge(
    points_pub: &acres_ros::Pub<PointCloud2>,
    obs_pub: &acres_ros::Pub<Observation>,
    beats_sub: &mut acres_ros::Sub<Heartbeat>,
    waiter: &mut acres_ros::Waiter,
    pts: &[[f32; 4]],
    port: u16,
    tls: bool,
) -> Option<f64> {
    println!("link {}:", if tls { "with TLS 1.3 (pinned certificate)" } else { "plaintext" });
    let fp_file = std::env::temp_dir().join(format!("acres-bench-fp-{}-{port}", std::process::id()));
    let _ = std::fs::remove_file(&fp_file);
    let mut bridge = Command::new(env!("CARGO_BIN_EXE_acres_bridge"))
        .args(["--ros-args", "-p", "host:=127.0.0.1", "-p", &format!("port:={port}")])
        .args(["-p", &format!("tls:={tls}"), "-p", &format!("fingerprint_file:={}", fp_file.display())])
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DISTRO", "jazzy")
        .env("RUST_LOG", "warn,rustdds=off,ros2_client=error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("bridge");
    let pid = bridge.id();
    // The harness's session: reader thread (decode + scan), keeper (beats, pings).
    let pins: Vec<String> = if tls {
        let fp = (0..200)
            .find_map(|_| {
                std::thread::sleep(Duration::from_millis(50));
                std::fs::read_to_string(&fp_file).ok().filter(|t| t.ends_with('\n'))
            })
            .expect("the bridge's fingerprint");
        vec![link::tls::parse_fingerprint(&fp).expect("a fingerprint")]
    } else {
        Vec::new()
    };
    let opts = acres_harness::world::link::LinkOptions {
        host: "127.0.0.1".into(),
        port,
        silent_s: 2.0,
        token: None,
        pins,
        sweep_encoding: encoding(),
    };
    let session =
        acres_harness::world::link::Session::attach(&opts, Duration::from_secs(10), ScanConfig::default())
            .expect("attach to the bridge");
    let shared = session.shared.clone();
    let reader = std::thread::spawn(move || {
        let (mut lat_ms, mut taken_ms, mut sweep_bytes, mut dropped) =
            (Vec::new(), Vec::new(), Vec::new(), 0u64);
        while lat_ms.len() < SWEEPS {
            let Ok(r) = session.rx.recv_timeout(Duration::from_secs(5)) else { break };
            match &r.msg {
                link::FromBridge::Step(st) => dropped = st.dropped_sweeps,
                link::FromBridge::Sweep(sw) if r.scan.is_some() => {
                    taken_ms.push((wall_s() - sw.t_s) * 1000.0);
                    lat_ms.push((r.at_wall_s - sw.t_s) * 1000.0);
                    sweep_bytes.push(
                        session.shared.counts.bytes_received.load(std::sync::atomic::Ordering::Relaxed)
                            as f64,
                    );
                }
                _ => {}
            }
        }
        (lat_ms, taken_ms, sweep_bytes, dropped, session)
    });
    std::thread::sleep(Duration::from_millis(1500)); // discovery
    while beats_sub.take().is_some() {} // beats queued before the measurement
    let t_cpu0 = cpu_ticks(pid);
    let wall0 = Instant::now();
    let mut beat_at = Vec::new();
    let start = Instant::now();
    for k in 0..(SWEEPS + 20) * 2 {
        let due = start + Duration::from_millis(50 * k as u64);
        loop {
            while beats_sub.take().is_some() {
                beat_at.push(Instant::now());
            }
            let now = Instant::now();
            if now >= due {
                break;
            }
            waiter.wait(due - now);
        }
        if k % 2 == 0 {
            points_pub.publish(cloud(pts));
        }
        obs_pub.publish(observation());
        if reader.is_finished() {
            break;
        }
    }
    let secs_run = wall0.elapsed().as_secs_f64();
    let tick = 100.0; // USER_HZ
    let cpu_share = (cpu_ticks(pid) - t_cpu0) as f64 / tick / secs_run;
    let (mut lat, mut taken, bytes, dropped, _session) = reader.join().unwrap();
    let mut periods: Vec<f64> =
        beat_at.windows(2).map(|w| ((w[1] - w[0]).as_secs_f64() - 0.2).abs() * 1000.0).collect();
    println!("  {} sweeps through acres_bridge to the harness's link session", lat.len());
    if !lat.is_empty() {
        println!(
            "  sweep latency publish → harness scan (its reader thread): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (target p99 <= 2 ms)",
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99),
            pct(&mut lat, 1.0)
        );
        println!(
            "  sweep latency publish → taken from the session's channel by another thread: p50 {:.2} ms, p99 {:.2} ms",
            pct(&mut taken, 0.5),
            pct(&mut taken, 0.99)
        );
        // Bytes received between two sweeps: a sweep line and the steps between (two at 20 Hz).
        let mut per: Vec<f64> = bytes.windows(2).map(|w| w[1] - w[0]).collect();
        if !per.is_empty() {
            println!(
                "  bytes on the socket per sweep period (its sweep line and two steps): {:.0}",
                pct(&mut per, 0.5)
            );
        }
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
    // Link-loss detection: the same session against the bridge frozen; observations keep coming
    // on the ROS side, so only the freeze is detected.
    for _ in 0..25 {
        obs_pub.publish(observation());
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = Command::new("kill").args(["-STOP", &pid.to_string()]).status();
    let frozen = Instant::now();
    while shared.lost().is_none() && frozen.elapsed() < Duration::from_secs(10) {
        obs_pub.publish(observation());
        std::thread::sleep(Duration::from_millis(1));
    }
    // The harness cannot know of the freeze before the bridge's last line, which came up to a
    // step period (here 20 ms) before it: the silence it measures starts there.
    let (since_freeze_s, since_last_step_s) = (frozen.elapsed().as_secs_f64(), shared.step_age_s());
    println!(
        "  link-loss detection (bridge frozen): {since_last_step_s:.3} s after the bridge's last step, {since_freeze_s:.3} s after the freeze ({}) (target 2.0-2.2 s)",
        shared.lost().map(|c| c.to_string()).unwrap_or_default()
    );
    let _ = Command::new("kill").args(["-CONT", &pid.to_string()]).status();
    let _ = bridge.kill();
    let _ = bridge.wait();
    let _ = std::fs::remove_file(&fp_file);
    (!lat.is_empty()).then(|| pct(&mut lat, 0.99))
}
