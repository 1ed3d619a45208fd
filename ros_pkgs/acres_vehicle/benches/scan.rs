//! Speed of the scan function against its numpy reference, and of the LiDAR sweep.
//!
//! Run with `cargo bench -p acres_vehicle --bench scan`. Prints, for two 14,400-point sweeps
//! (a LiDAR sweep of a busy scene padded with field clutter, and a synthetic sweep with 40% of
//! its points in the height band):
//! the Rust scan's µs per call and points per second, numpy's points per second (from
//! `bench/scan_numpy.py`, run as a `python3` process on the same points), their ratio, and how
//! many bins differ (only bins holding a point within 1e-3° of a bin edge may: with a 0.5°
//! LiDAR every other column lies on a bin edge, so a few such bins are expected). Then the
//! cost of one `Lidar::sweep` in a scouting-like scene.
//!
//! Exit code 0, or 1 when the Rust and numpy outputs disagree outside edge bins.
//! Without python3 or numpy it says so and still prints the Rust figures.

use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use acres_core::lidar::{Lidar, LidarConfig, Sweep};
use acres_core::objects::Body;
use acres_farm::geom::{Obb, Pose, Vec2};
use acres_vehicle::scan::{scan, Scan, ScanConfig};

/// Points per benchmark sweep.
const POINTS: usize = 14_400;
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/scan_numpy.py");

/// Deterministic xorshift in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
}

fn body(id: u32, x: f64, y: f64, yaw: f64, (l, w, h): (f64, f64, f64)) -> Body {
    Body {
        id,
        obb: Obb { center: Vec2::new(x, y), yaw, half_length_m: l / 2.0, half_width_m: w / 2.0 },
        height_m: h,
    }
}

const TRUCK: (f64, f64, f64) = (8.0, 2.5, 3.5);
const PERSON: (f64, f64, f64) = (0.6, 0.6, 1.8);
const TRACTOR: (f64, f64, f64) = (4.5, 2.4, 3.0);
const CAR: (f64, f64, f64) = (4.5, 1.8, 1.5);

/// A 20-ring x 720-column LiDAR sweep of a yard with six objects, padded to [`POINTS`] with
/// field clutter (crop tops just below the band, posts and hedges in it), deterministic.
fn lidar_sweep() -> Vec<[f32; 4]> {
    let cfg =
        LidarConfig { rings: 20, min_elevation_deg: -24.0, max_elevation_deg: 14.0, ..Default::default() };
    let lidar = Lidar::new(cfg);
    let bodies = [
        body(1, 12.0, 4.0, 1.5, TRUCK),
        body(2, 6.0, -5.0, 0.3, PERSON),
        body(3, -9.0, 7.0, 2.0, TRACTOR),
        body(4, -15.0, -10.0, 0.7, CAR),
        body(5, 25.0, -12.0, 0.0, PERSON),
        body(6, 3.0, 18.0, 0.2, TRUCK),
    ];
    let mut sweep = Sweep::default();
    lidar.sweep(Pose::default(), &bodies, 0.0, &mut sweep);
    let mut pts = sweep.points;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    while pts.len() < POINTS {
        let b = rng.range(-std::f64::consts::PI, std::f64::consts::PI);
        let r = rng.range(2.0, 45.0);
        let z = if rng.next() < 0.6 { rng.range(-2.1, -1.91) } else { rng.range(-1.9, 0.5) };
        pts.push([(r * b.cos()) as f32, (r * b.sin()) as f32, z as f32, 0.5]);
    }
    pts.truncate(POINTS);
    pts
}

/// [`POINTS`] random points, 40% in the height band, ranges up to 50 m.
fn synthetic_sweep() -> Vec<[f32; 4]> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    (0..POINTS)
        .map(|_| {
            let b = rng.range(-std::f64::consts::PI, std::f64::consts::PI);
            let r = rng.range(0.5, 50.0);
            let z = if rng.next() < 0.4 { rng.range(-1.9, 0.5) } else { -2.2 };
            [(r * b.cos()) as f32, (r * b.sin()) as f32, z as f32, 0.5]
        })
        .collect()
}

/// Mean time per call of `f`, over at least `budget` of wall time.
fn time_per_call(budget: Duration, mut f: impl FnMut()) -> Duration {
    for _ in 0..100 {
        f();
    }
    let mut calls = 0u32;
    let start = Instant::now();
    while start.elapsed() < budget {
        for _ in 0..100 {
            f();
        }
        calls += 100;
    }
    start.elapsed() / calls
}

/// The numpy reference's output and seconds per call, or why it could not run.
fn run_numpy(points: &[[f32; 4]], tag: &str) -> Result<(Scan, f64), String> {
    let dir = std::env::temp_dir();
    let input: PathBuf = dir.join(format!("acres-scan-bench-{}-{tag}.bin", std::process::id()));
    let output: PathBuf = dir.join(format!("acres-scan-bench-{}-{tag}.json", std::process::id()));
    let bytes: Vec<u8> = points.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&input, bytes).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let run =
        Command::new("python3").arg(SCRIPT).arg(&input).arg(&output).args(["--repeat", "2000"]).output();
    let _ = std::fs::remove_file(&input);
    let run = run.map_err(|e| format!("python3 not runnable: {e}"))?;
    if !run.status.success() {
        let err = String::from_utf8_lossy(&run.stderr);
        let _ = std::fs::remove_file(&output);
        if err.contains("No module named 'numpy'") {
            return Err("numpy is not installed for python3 (pip install numpy)".into());
        }
        return Err(format!("scan_numpy.py failed: {}", err.trim()));
    }
    let text = std::fs::read_to_string(&output).map_err(|e| format!("no numpy output: {e}"));
    let _ = std::fs::remove_file(&output);
    let json: serde_json::Value =
        serde_json::from_str(&text?).map_err(|e| format!("bad numpy output: {e}"))?;
    let num = |v: &serde_json::Value| v.as_f64().map_or(f32::INFINITY, |x| x as f32);
    let mut s = Scan::default();
    let ranges = json["ranges_m"].as_array().ok_or("no ranges_m")?;
    let sectors = json["sectors_m"].as_array().ok_or("no sectors_m")?;
    for (dst, src) in s.ranges_m.iter_mut().zip(ranges) {
        *dst = num(src);
    }
    for (dst, src) in s.sectors_m.iter_mut().zip(sectors) {
        *dst = num(src);
    }
    s.ahead_m = num(&json["ahead_m"]);
    let seconds = json["seconds_per_call"].as_f64().ok_or("no seconds_per_call")?;
    Ok((s, seconds))
}

/// Bins where the two scans differ (finite ranges more than 1e-4 m apart, or one infinite).
fn differing_bins(a: &Scan, b: &Scan) -> Vec<usize> {
    (0..360)
        .filter(|&k| {
            let (x, y) = (a.ranges_m[k], b.ranges_m[k]);
            match (x.is_finite(), y.is_finite()) {
                (true, true) => (x - y).abs() > 1e-4,
                (fx, fy) => fx != fy,
            }
        })
        .collect()
}

/// True when some kept point lies within 1e-3° of an edge of bin `k`: the documented case
/// where the Rust and numpy bins may differ.
fn has_edge_point(points: &[[f32; 4]], cfg: &ScanConfig, k: usize) -> bool {
    points.iter().any(|p| {
        let r = (p[0] as f64).hypot(p[1] as f64);
        let kept = p[2] >= cfg.min_z_m && p[2] <= cfg.max_z_m && r > 0.05 && r <= cfg.max_range_m as f64;
        let b = (p[1] as f64).atan2(p[0] as f64).to_degrees().rem_euclid(360.0);
        let near = |edge: f64| {
            let d = (b - edge).rem_euclid(360.0);
            d.min(360.0 - d) < 1e-3
        };
        kept && (near(k as f64 - 0.5) || near(k as f64 + 0.5))
    })
}

/// Benchmarks one sweep; false when the outputs disagree beyond the tolerance.
fn bench_scan(name: &str, tag: &str, points: &[[f32; 4]]) -> bool {
    let cfg = ScanConfig::default();
    let in_band = points.iter().filter(|p| p[2] >= cfg.min_z_m && p[2] <= cfg.max_z_m).count();
    println!(
        "\n{name}: {} points, {in_band} ({:.0}%) in the height band",
        points.len(),
        100.0 * in_band as f64 / points.len() as f64
    );
    let per_call = time_per_call(Duration::from_millis(700), || {
        black_box(scan(black_box(points), &cfg));
    });
    let rust_pps = points.len() as f64 / per_call.as_secs_f64();
    println!("  rust scan:  {:8.2} µs/call  {:8.1} M points/s", per_call.as_secs_f64() * 1e6, rust_pps / 1e6);
    let rust = scan(points, &cfg);
    match run_numpy(points, tag) {
        Ok((numpy, seconds)) => {
            let numpy_pps = points.len() as f64 / seconds;
            println!("  numpy scan: {:8.2} µs/call  {:8.1} M points/s", seconds * 1e6, numpy_pps / 1e6);
            println!("  ratio rust/numpy: {:.1}x", rust_pps / numpy_pps);
            let diff = differing_bins(&rust, &numpy);
            let unexplained = diff.iter().filter(|&&k| !has_edge_point(points, &cfg, k)).count();
            let ahead_ok = rust.ahead_m == numpy.ahead_m;
            println!(
                "  outputs: {} of 360 bins differ, {unexplained} of them not explained by a point within \
                 1e-3° of a bin edge; ahead equal: {ahead_ok}",
                diff.len()
            );
            if unexplained > 0 || !ahead_ok {
                println!("  FAILED: the Rust and numpy scans disagree");
                return false;
            }
        }
        Err(why) => println!("  numpy scan: not measured: {why}"),
    }
    true
}

/// µs per `Lidar::sweep` while driving a straight scouting pass past `bodies`.
fn bench_sweep(lidar: &Lidar, bodies: &[Body]) -> f64 {
    let mut sweep = Sweep::default();
    let mut step = 0u32;
    let per_call = time_per_call(Duration::from_millis(500), || {
        step = (step + 1) % 400;
        let pose = Pose { x: step as f64 * 0.25, y: 0.0, yaw: 0.05 };
        lidar.sweep(black_box(pose), black_box(bodies), 0.0, &mut sweep);
        black_box(&sweep);
    });
    per_call.as_secs_f64() * 1e6
}

fn main() {
    let mut ok = bench_scan(
        "LiDAR sweep (20 rings x 720 columns, 6 objects) padded with clutter",
        "lidar",
        &lidar_sweep(),
    );
    ok &= bench_scan("synthetic sweep (uniform bearings, ranges 0.5-50 m)", "synthetic", &synthetic_sweep());

    let lidar = Lidar::new(LidarConfig::default());
    let scouting = [body(1, 60.0, 12.0, 0.4, TRUCK), body(2, 85.0, -8.0, 0.0, PERSON)];
    let mut sweep = Sweep::default();
    lidar.sweep(Pose::default(), &[], 0.0, &mut sweep);
    println!("\nLidar::sweep, default 16 rings x 720 columns ({} ground points):", sweep.points.len());
    println!("  no objects:                     {:8.2} µs/sweep", bench_sweep(&lidar, &[]));
    println!("  scouting, truck + person:       {:8.2} µs/sweep", bench_sweep(&lidar, &scouting));
    let near = [body(1, 20.0, 3.0, 1.5, TRUCK), body(2, 30.0, -4.0, 0.0, PERSON)];
    println!("  both objects 15-30 m ahead:     {:8.2} µs/sweep", bench_sweep(&lidar, &near));
    std::process::exit(if ok { 0 } else { 1 });
}
