//! The Rust scan function against its numpy reference (`bench/scan_numpy.py`), run as a real
//! `python3` process on synthetic sweeps.
//!
//! Points within 1e-3° of a bin edge are left out of the sweeps: there the documented contract
//! lets the two disagree. Everything else must match exactly (both compute in `f32`).
//! Ignored by the plain `cargo test` (it needs numpy); the test command runs it, and it fails
//! without numpy (`tests/support/require.rs`).

#[path = "../../../tests/support/require.rs"]
mod require;
use std::path::PathBuf;
use std::process::Command;

use acres_vehicle::scan::{scan, Scan, ScanConfig};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/scan_numpy.py");

/// A temporary file removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str) -> Self {
        Self(std::env::temp_dir().join(format!("acres-scan-numpy-{}-{tag}", std::process::id())))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs the numpy reference on `points` with `cfg`.
fn numpy_scan(tag: &str, points: &[[f32; 4]], cfg: &ScanConfig) -> Scan {
    let input = TempFile::new(&format!("{tag}.bin"));
    let output = TempFile::new(&format!("{tag}.json"));
    let bytes: Vec<u8> = points.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&input.0, bytes).expect("write points");
    let out = Command::new(require::python3())
        .arg(SCRIPT)
        .arg(&input.0)
        .arg(&output.0)
        .args(["--min-z", &cfg.min_z_m.to_string(), "--max-z", &cfg.max_z_m.to_string()])
        .args(["--ahead-half-width", &cfg.ahead_half_width_m.to_string()])
        .args(["--max-range", &cfg.max_range_m.to_string()])
        .output()
        .expect("run python3");
    assert!(out.status.success(), "scan_numpy.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&output.0).expect("read json")).expect("parse json");
    assert_eq!(json["points"].as_u64(), Some(points.len() as u64));
    let num = |v: &serde_json::Value| v.as_f64().map_or(f32::INFINITY, |x| x as f32);
    let mut s = Scan::default();
    for (dst, src) in s.ranges_m.iter_mut().zip(json["ranges_m"].as_array().expect("ranges")) {
        *dst = num(src);
    }
    for (dst, src) in s.sectors_m.iter_mut().zip(json["sectors_m"].as_array().expect("sectors")) {
        *dst = num(src);
    }
    s.ahead_m = num(&json["ahead_m"]);
    s
}

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

/// True when the point's exact bearing is within 1e-3° of a bin edge.
fn near_edge(p: &[f32; 4]) -> bool {
    let b = (p[1] as f64).atan2(p[0] as f64).to_degrees();
    ((b - b.floor()) - 0.5).abs() < 1e-3
}

/// `n` points, a share `in_band` of them in the default height band, ranges up to 50 m.
fn synthetic(seed: u64, n: usize, in_band: f64) -> Vec<[f32; 4]> {
    let mut rng = Rng(seed);
    let mut pts = Vec::with_capacity(n);
    while pts.len() < n {
        let b = rng.range(-std::f64::consts::PI, std::f64::consts::PI);
        let r = if rng.next() < 0.1 { rng.range(0.0, 3.0) } else { rng.range(0.0, 50.0) };
        let z = if rng.next() < in_band { rng.range(-1.9, 0.5) } else { rng.range(-2.3, -1.91) };
        let p = [(r * b.cos()) as f32, (r * b.sin()) as f32, z as f32, 0.5];
        if !near_edge(&p) {
            pts.push(p);
        }
    }
    pts
}

fn assert_same(tag: &str, points: &[[f32; 4]], cfg: &ScanConfig) {
    let rust = scan(points, cfg);
    let numpy = numpy_scan(tag, points, cfg);
    for k in 0..360 {
        assert_eq!(rust.ranges_m[k], numpy.ranges_m[k], "{tag}: bin {k}");
    }
    assert_eq!(rust.sectors_m, numpy.sectors_m, "{tag}: sectors");
    assert_eq!(rust.ahead_m, numpy.ahead_m, "{tag}: ahead");
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    #[test]
    #[ignore = "needs numpy in the test venv: run by tools/test.sh"]
    fn random_sweeps_match_numpy() {
        require::python("numpy");
        let cfg = ScanConfig::default();
        assert_same("full", &synthetic(1, 14_400, 0.4), &cfg);
        assert_same("sparse", &synthetic(2, 300, 0.9), &cfg);
        assert_same("odd", &synthetic(3, 1_001, 0.5), &cfg);
    }

    #[test]
    #[ignore = "needs numpy in the test venv: run by tools/test.sh"]
    fn edge_cases_match_numpy() {
        require::python("numpy");
        let cfg = ScanConfig::default();
        assert_same("empty", &[], &cfg);
        assert_same("ground", &synthetic(4, 500, 0.0), &cfg);
        // Around the ±180° seam, on the axes and at the corridor's edges.
        let pts = [
            [-10.0, 0.01, 0.0, 0.0],
            [-12.0, -0.01, 0.0, 0.0],
            [-9.0, 0.0, 0.0, 0.0],
            [7.0, 0.0, 0.0, 0.0],
            [0.0, 6.0, 0.0, 0.0],
            [0.0, -6.5, 0.0, 0.0],
            [5.0, 1.7, 0.0, 0.0],
            [4.0, -1.71, 0.0, 0.0],
            [0.03, 0.0, 0.0, 0.0],
            [40.0, 0.0, -1.9, 0.0],
            [0.0, 40.01, 0.5, 0.0],
        ];
        assert_same("seam", &pts, &cfg);
    }

    #[test]
    #[ignore = "needs numpy in the test venv: run by tools/test.sh"]
    fn other_parameters_match_numpy() {
        require::python("numpy");
        let cfg = ScanConfig { min_z_m: -1.0, max_z_m: 1.0, ahead_half_width_m: 3.0, max_range_m: 20.0 };
        let mut pts = synthetic(5, 5_000, 0.5);
        for (i, p) in pts.iter_mut().enumerate() {
            p[2] = (i % 7) as f32 * 0.4 - 1.4;
        }
        assert_same("params", &pts, &cfg);
    }
}
