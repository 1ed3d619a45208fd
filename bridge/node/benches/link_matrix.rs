//! The link over a field's Wi-Fi, at real time: a matrix of bandwidths (the bridge's port
//! shaped by `tc`, lo's MTU 1500) × latencies ± jitter (the impairing proxy of the link tests,
//! each way) between the real bridge process and the harness's own link session
//! (`acres_harness::world::link::Session`: its reader thread decodes each step and builds the
//! scan). This process publishes 14,400-point sweeps at 10 Hz and observations at 20 Hz, stamped
//! with the wall clock (the clock the harness reads), as `link_sweeps` does. Each cell prints
//! (asserts nothing):
//!
//! - sweeps delivered to the harness per second, and the share the bridge dropped;
//! - the sweep's age at the harness (its stamp to the harness's scan): p50, p99;
//! - the observation's lateness (its stamp to the harness's receive): p50, p99, and the largest
//!   of `link_stats`' `lateness_max_s` (the harness's own figure, without the stamp's clock);
//! - control lines: the ping's round trip (p50, p99) and a beat's one way harness → bridge
//!   (p99; from the bridge's stamp on `/acres/skill/heartbeat`);
//! - bytes per second from the bridge;
//! - link losses during the cell (false: nothing was cut), then a 3 s stall of the proxy and
//!   the time the harness takes to call the link lost (true).
//!
//! The cells: `ACRES_MATRIX_RATES` (Mbit/s, `0` unshaped; default `0,25,10,5,2`),
//! `ACRES_MATRIX_DELAYS` (ms±ms; default `0±0,20±10,50±20`), `ACRES_MATRIX_CELL_S` (the
//! measured seconds of a cell; default 20), `ACRES_MATRIX_QUEUE_KB` (the shaped class's queue,
//! KiB, tail drop; default the kernel's 1000 packets), `ACRES_MATRIX_SWEEP_HZ` (the sweeps'
//! rate; default 10: a LiDAR throttled for a slow link). `tools/bench_link.sh` runs it and keeps
//! the table.
//!
//! NETWORK SAFETY: DDS participants (this process and the bridge) and `tc` on lo: run only
//! inside a private network namespace with lo alone (refused elsewhere, exit 3):
//!
//! ```text
//! unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST exec cargo bench --profile test -p acres_bridge --bench link_matrix'
//! ```

#[path = "../tests/util/proxy.rs"]
#[allow(dead_code)]
mod proxy;
#[path = "../tests/util/shape.rs"]
#[allow(dead_code)]
mod shape;

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acres_link_protocol as link;
use acres_msgs::acres_interfaces::{Heartbeat, Observation};
use acres_msgs::sensor_msgs::PointCloud2;
use acres_msgs::std_msgs::Header;
use acres_ros::node::{stamp, wall_s};
use acres_ros::{qos, RosArgs, RosEnv, RosNode};
use acres_vehicle::scan::ScanConfig;
use proxy::{Impair, LinkProxy};

const BRIDGE_PORT: u16 = 5681;
const PROXY_PORT: u16 = 5781;
/// The shaped class's rate of an unshaped cell, kbit/s (10 Gbit/s).
const UNSHAPED_KBIT: u64 = 10_000_000;

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.into())
}

/// One cell's figures.
#[derive(Default)]
struct Figures {
    sweeps_per_s: f64,
    dropped_share: f64,
    sweep_age_ms: (f64, f64),
    lateness_ms: (f64, f64),
    harness_lateness_max_ms: Option<f64>,
    rtt_ms: (f64, f64),
    beat_up_p99_ms: f64,
    bytes_per_s: f64,
    false_losses: String,
    true_loss_s: Option<f64>,
    /// No step came at all.
    no_steps: bool,
}

/// What the harness's reader side saw, each with its receive time (wall s).
#[derive(Default)]
struct Seen {
    sweep_age_ms: Vec<(f64, f64)>,
    lateness_ms: Vec<(f64, f64)>,
    dropped: Vec<(f64, u64)>,
}

/// The values received within `[from, to]` (wall s).
fn within(v: &[(f64, f64)], from: f64, to: f64) -> Vec<f64> {
    v.iter().filter(|(at, _)| (from..=to).contains(at)).map(|(_, x)| *x).collect()
}

struct Publishers {
    points: acres_ros::Pub<PointCloud2>,
    obs: acres_ros::Pub<Observation>,
    beats: acres_ros::Sub<Heartbeat>,
}

fn main() {
    if !acres_ros::env::in_loopback_only_netns() {
        eprintln!("link_matrix: not inside a private network namespace with lo alone; run it under unshare -n (see the file's docs)");
        std::process::exit(3);
    }
    let rates: Vec<u64> = env_or("ACRES_MATRIX_RATES", "0,25,10,5,2")
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let delays: Vec<(u64, u64)> = env_or("ACRES_MATRIX_DELAYS", "0±0,20±10,50±20")
        .split(',')
        .filter_map(|s| {
            let (d, j) = s.trim().split_once('±')?;
            Some((d.parse().ok()?, j.parse().ok()?))
        })
        .collect();
    let cell_s: f64 = env_or("ACRES_MATRIX_CELL_S", "20").parse().unwrap_or(20.0);
    if rates.is_empty() || delays.is_empty() || cell_s <= 0.0 {
        eprintln!("link_matrix: ACRES_MATRIX_RATES, ACRES_MATRIX_DELAYS or ACRES_MATRIX_CELL_S unreadable");
        std::process::exit(2);
    }
    // The shaping is set up once, before any DDS participant (lo's MTU 1500 from the start, the
    // qdisc never replaced under DDS traffic); a cell changes the class's rate only.
    let queue =
        std::env::var("ACRES_MATRIX_QUEUE_KB").ok().and_then(|q| q.parse::<u64>().ok()).map(|q| q << 10);
    let shaped = shape::Shaped::port_queue(BRIDGE_PORT, UNSHAPED_KBIT, queue);
    let mut ros = publishers();
    let pts: Vec<[f32; 4]> = (0..14_400)
        .map(|i| {
            let a = i as f32 * 0.0273;
            [20.0 * a.cos(), 20.0 * a.sin(), -1.0 + (i % 16) as f32 * 0.1, 0.5]
        })
        .collect();
    println!(
        "link_matrix: 14,400-point sweeps at {} Hz, observations at 20 Hz, real time, {cell_s} s a cell (load average {})",
        env_or("ACRES_MATRIX_SWEEP_HZ", "10"),
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!("| link | latency | sweeps/s | dropped | sweep age p50/p99 ms | obs. lateness p50/p99 ms (harness's max) | ping RTT p50/p99 ms | beat up p99 ms | kB/s | false losses | true loss after |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let _bridge = start_bridge();
    let drops_before = shape::Shaped::counts_of("1:10").1;
    let mut k = 0u16;
    for &rate in &rates {
        for &(d, j) in &delays {
            shaped.set_rate(if rate == 0 { UNSHAPED_KBIT } else { rate * 1000 });
            let mut f = cell(&mut ros.1, &pts, Impair::latency_ms(d, j), cell_s, k);
            k += 1;
            let mut link = if rate == 0 { "unshaped".to_string() } else { format!("{rate} Mbit/s") };
            if f.no_steps {
                // This process's DDS writers stopped reaching the bridge (seen after minutes of
                // sweeps; RustDDS): a new participant, and the cell once more.
                drop(ros);
                ros = publishers();
                f = cell(&mut ros.1, &pts, Impair::latency_ms(d, j), cell_s, k);
                k += 1;
                link.push_str(" (again, a new participant)");
            }
            println!(
                "| {link} | {d} ± {j} ms | {:.1} | {:.0} % | {:.0} / {:.0} | {:.0} / {:.0} ({}) | {:.1} / {:.1} | {:.1} | {:.0} | {} | {} |",
                f.sweeps_per_s,
                f.dropped_share * 100.0,
                f.sweep_age_ms.0,
                f.sweep_age_ms.1,
                f.lateness_ms.0,
                f.lateness_ms.1,
                f.harness_lateness_max_ms.map_or("–".into(), |m| format!("{m:.0}")),
                f.rtt_ms.0,
                f.rtt_ms.1,
                f.beat_up_p99_ms,
                f.bytes_per_s / 1000.0,
                f.false_losses,
                f.true_loss_s.map_or("not lost".into(), |s| format!("{s:.2} s")),
            );
        }
    }
    let (link_b, link_drops) = shape::Shaped::counts_of("1:20");
    let (other_b, other_drops) = shape::Shaped::counts_of("1:10");
    println!(
        "tc: the link's class sent {link_b} B, dropped {link_drops} packets; everything else (DDS) sent {other_b} B, dropped {} packets",
        other_drops - drops_before
    );
}

/// This process's node and its endpoints.
fn publishers() -> (RosNode, Publishers) {
    let env = RosEnv { domain_id: 0, range: acres_ros::env::DiscoveryRange::Localhost };
    let args = RosArgs::parse(["bench"], "acres_link_matrix").unwrap();
    let mut node = RosNode::new(args, env).unwrap();
    let pubs = Publishers {
        points: node.publisher::<PointCloud2>("/lidar/points", qos::sensor_data()).unwrap(),
        obs: node.publisher::<Observation>("/acres/observation", qos::default_profile()).unwrap(),
        beats: node.subscription::<Heartbeat>("/acres/skill/heartbeat", qos::default_profile()).unwrap(),
    };
    (node, pubs)
}

fn cloud(pts: &[[f32; 4]]) -> PointCloud2 {
    acres_ros::cloud::to_cloud(Header { stamp: stamp(wall_s()), frame_id: "lidar".into() }, pts)
}

/// The bridge of every cell (one process: a bridge killed at each cell would leave its DDS
/// readers matched to this process's writers until their leases ran out).
fn start_bridge() -> Bridge {
    Bridge(
        Command::new(env!("CARGO_BIN_EXE_acres_bridge"))
            .args([
                "--ros-args",
                "-p",
                "host:=127.0.0.1",
                "-p",
                &format!("port:={BRIDGE_PORT}"),
                "-p",
                "tls:=false",
            ])
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .env("ROS_DISTRO", "jazzy")
            .env("RUST_LOG", "info,rustdds=off,ros2_client=error")
            .stdout(Stdio::null())
            .stderr(bridge_log())
            .spawn()
            .expect("the bridge starts"),
    )
}

/// The sweep encoding the harness asks for (`ACRES_MATRIX_SWEEPS`: `mm_zstd`, the default,
/// `f32_zstd` or `f32`, protocol 3's packing).
fn sweep_encoding() -> link::SweepEncoding {
    let want = env_or("ACRES_MATRIX_SWEEPS", "mm_zstd");
    link::SweepEncoding::ALL
        .iter()
        .copied()
        .find(|e| e.as_str() == want)
        .unwrap_or_else(|| panic!("ACRES_MATRIX_SWEEPS={want}: expected mm_zstd, f32_zstd or f32"))
}

/// The bridge's process, killed on drop (also when a cell panics).
struct Bridge(std::process::Child);

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One cell: the shaping, a proxy, a session; `cell_s` of traffic, then a stall.
fn cell(pubs: &mut Publishers, pts: &[[f32; 4]], imp: Impair, cell_s: f64, k: u16) -> Figures {
    let port = BRIDGE_PORT;
    // Sweeps every this many 50 ms ticks (ACRES_MATRIX_SWEEP_HZ: a LiDAR throttled for the link).
    let sweep_hz: f64 = env_or("ACRES_MATRIX_SWEEP_HZ", "10").parse().unwrap_or(10.0);
    let sweep_ticks = (20.0 / sweep_hz.clamp(0.1, 20.0)).round().max(1.0) as u64;
    let proxy = LinkProxy::impaired(PROXY_PORT + k, port, imp);
    let opts = acres_harness::world::link::LinkOptions {
        host: "127.0.0.1".into(),
        port: proxy.port,
        silent_s: 2.0,
        token: None,
        pins: vec![],
        sweep_encoding: sweep_encoding(),
    };
    let session =
        acres_harness::world::link::Session::attach(&opts, Duration::from_secs(10), ScanConfig::default())
            .expect("attach to the bridge through the proxy");
    let beats_t0 = wall_s();
    let shared = session.shared.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let stepped = Arc::new(AtomicBool::new(false));
    let (stop_r, stepped_r) = (stop.clone(), stepped.clone());
    let reader = std::thread::spawn(move || {
        let mut seen = Seen::default();
        while !stop_r.load(Ordering::Relaxed) {
            let Ok(r) = session.rx.recv_timeout(Duration::from_millis(100)) else { continue };
            match &r.msg {
                link::FromBridge::Step(st) => {
                    stepped_r.store(true, Ordering::Relaxed);
                    seen.dropped.push((r.at_wall_s, st.dropped_sweeps));
                    let obs_s = st.observation.header.stamp.as_secs_f64();
                    seen.lateness_ms.push((r.at_wall_s, (r.at_wall_s - obs_s) * 1000.0));
                }
                // Protocol 4: a sweep comes in its own line, stamped with its acquisition time.
                link::FromBridge::Sweep(sw) if r.scan.is_some() => {
                    seen.sweep_age_ms.push((r.at_wall_s, (r.at_wall_s - sw.t_s) * 1000.0));
                }
                _ => {}
            }
        }
        (seen, session)
    });
    // Observations until the bridge sends steps (up to 10 s; discovery, the first time), then
    // the measurement.
    let t_disc = Instant::now();
    while !stepped.load(Ordering::Relaxed) && t_disc.elapsed() < Duration::from_secs(10) {
        pubs.obs.publish(observation());
        std::thread::sleep(Duration::from_millis(50));
    }
    shared.lateness.lock().unwrap().take();
    let (b0, r0) = (shared.counts.bytes_received.load(Ordering::Relaxed), wall_s());
    let start = Instant::now();
    let (mut rtts, mut last_rtt, mut beat_up, mut published, mut lat_max) =
        (Vec::new(), 0u64, Vec::new(), 0u64, None);
    let mut false_losses = String::from("0");
    let mut n = 0u64;
    while start.elapsed().as_secs_f64() < cell_s {
        let due = start + Duration::from_millis(50 * n);
        while Instant::now() < due {
            std::thread::sleep(Duration::from_millis(2));
        }
        if n.is_multiple_of(sweep_ticks) {
            pubs.points.publish(cloud(pts));
            published += 1;
        }
        pubs.obs.publish(observation());
        n += 1;
        let rtt = shared.counts.rtt_us.load(Ordering::Relaxed);
        if rtt != last_rtt && rtt > 0 {
            rtts.push(rtt as f64 / 1000.0);
            last_rtt = rtt;
        }
        while let Some(b) = pubs.beats.take() {
            if b.stamp.as_secs_f64() < beats_t0 {
                continue; // a beat of the cell before
            }
            // Beat n went (n - 1) × 0.2 s after the session's keeper started (at attach).
            let sent = beats_t0 + (b.seq.saturating_sub(1)) as f64 * link::BEAT_PERIOD_S;
            beat_up.push((b.stamp.as_secs_f64() - sent) * 1000.0);
        }
        if n.is_multiple_of(100) {
            let m = shared.lateness.lock().unwrap().take().max_s;
            lat_max = m.map(|m| lat_max.map_or(m, |l: f64| l.max(m))).or(lat_max);
        }
        if let Some(c) = shared.lost() {
            false_losses = format!("1 ({c})");
            break;
        }
    }
    let r1 = wall_s();
    let secs = r1 - r0;
    let bytes = shared.counts.bytes_received.load(Ordering::Relaxed) - b0;
    let m = shared.lateness.lock().unwrap().take().max_s;
    lat_max = m.map(|m| lat_max.map_or(m, |l: f64| l.max(m))).or(lat_max);
    // A true loss: the proxy holds everything for 3 s; observations keep coming on the ROS side.
    let mut true_loss_s = None;
    if shared.lost().is_none() {
        proxy.stall(Duration::from_secs(3));
        let stalled = Instant::now();
        while shared.lost().is_none() && stalled.elapsed() < Duration::from_secs(4) {
            pubs.obs.publish(observation());
            std::thread::sleep(Duration::from_millis(20));
        }
        true_loss_s = shared.lost().map(|_| stalled.elapsed().as_secs_f64());
        // The close goes through when the stall ends: the bridge frees its slot for the next.
        while stalled.elapsed() < Duration::from_millis(3_300) {
            pubs.obs.publish(observation());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (seen, mut session) = reader.join().unwrap();
    session.end("the benchmark's cell ended");
    drop(proxy);
    std::thread::sleep(Duration::from_millis(300));
    // The measured window only (not the discovery, not the stall).
    let mut age = within(&seen.sweep_age_ms, r0, r1);
    let mut late = within(&seen.lateness_ms, r0, r1);
    let dropped = |at: f64| seen.dropped.iter().rev().find(|(t, _)| *t <= at).map_or(0, |(_, d)| *d);
    Figures {
        sweeps_per_s: age.len() as f64 / secs,
        dropped_share: (dropped(r1) - dropped(r0)) as f64 / published.max(1) as f64,
        sweep_age_ms: (pct(&mut age, 0.5), pct(&mut age, 0.99)),
        lateness_ms: (pct(&mut late, 0.5), pct(&mut late, 0.99)),
        harness_lateness_max_ms: lat_max.map(|s| s * 1000.0),
        rtt_ms: (pct(&mut rtts, 0.5), pct(&mut rtts, 0.99)),
        beat_up_p99_ms: pct(&mut beat_up, 0.99),
        bytes_per_s: bytes as f64 / secs,
        false_losses,
        true_loss_s,
        no_steps: !stepped.load(Ordering::Relaxed),
    }
}

/// The bridge's log, in the temporary folder (`acres-link-matrix-PID.log`).
fn bridge_log() -> Stdio {
    let path = std::env::temp_dir().join(format!("acres-link-matrix-{}.log", std::process::id()));
    std::fs::File::create(path).map_or_else(|_| Stdio::null(), Stdio::from)
}

fn observation() -> Observation {
    Observation { header: Header { stamp: stamp(wall_s()), frame_id: "odom".into() }, ..Default::default() }
}
