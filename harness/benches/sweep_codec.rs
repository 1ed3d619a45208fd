//! The link's sweep encodings on real simulated sweeps (prints figures, asserts nothing): the
//! sweeps of two link scenarios' missions driven in the in-process world (an object on the lane,
//! and an empty field), each packed by the bridge's path (`PackedSweep::from_le_bytes`, base64
//! included) and unpacked by the harness's (`Sweep::unpack`), for each encoding: bytes a sweep
//! on the wire (its line's data) against version 3's base64 `f32`, and encode + decode time a
//! sweep (median, p99), against Cloudini's published figure (zstd to 0.51 of the size in 1.6 ms
//! for XYZ + intensity). The simulated LiDAR is exact (its ground returns are the same template
//! every sweep), which flatters every compressor; the same sweeps with a real LiDAR's range noise
//! (uniform ±3 cm along each ray, intensity varied over 256 levels) are measured beside them.
//!
//! `cargo bench --workspace --profile test --bench sweep_codec`

use std::time::Instant;

use acres_harness::world::{CoreWorld, WorldPort};
use acres_link_protocol::{le_bytes, PackedSweep, SweepEncoding};
use acres_vehicle::{SkillKind, SkillRequest};

/// Sweeps taken from each scenario.
const SWEEPS: usize = 150;

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Up to [`SWEEPS`] sweeps of a scenario's mission (to its fields, scouting them), every second one.
fn sweeps_of(name: &str) -> Vec<Vec<[f32; 4]>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sc = acres_harness::scenario::load(
        &root.join(format!("scenarios/link/{name}.json")),
        &root.join("scenarios/maps"),
    )
    .expect("the scenario loads");
    let mut w = CoreWorld::new(&sc, 0);
    let mut out = Vec::new();
    let mut k = 0;
    for field in &sc.fields {
        for kind in [SkillKind::Goto, SkillKind::Scout] {
            w.request(&SkillRequest { skill: Some(kind), field: Some(field.clone()), ..Default::default() });
            while out.len() < SWEEPS && w.status().skill.is_some() {
                if w.step() {
                    k += 1;
                    if k % 2 == 0 {
                        out.push(w.sweep().expect("a sweep").points.clone());
                    }
                }
            }
        }
    }
    out
}

/// The sweeps with range noise along each ray (uniform ±3 cm) and 256 intensity levels, from a
/// fixed seed.
fn noisy(sweeps: &[Vec<[f32; 4]>]) -> Vec<Vec<[f32; 4]>> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    sweeps
        .iter()
        .map(|s| {
            s.iter()
                .map(|p| {
                    let r =
                        (f64::from(p[0]).powi(2) + f64::from(p[1]).powi(2) + f64::from(p[2]).powi(2)).sqrt();
                    let k = ((r + (next() - 0.5) * 0.06) / r.max(1e-6)) as f32;
                    [p[0] * k, p[1] * k, p[2] * k, (next() * 256.0).floor() as f32 / 255.0]
                })
                .collect()
        })
        .collect()
}

fn main() {
    let mut sweeps = sweeps_of("link_sim_truck_on_lane");
    sweeps.extend(sweeps_of("link_sim_f56"));
    measure("simulated", &sweeps);
    measure("with a real LiDAR's noise", &noisy(&sweeps));
    println!("  Cloudini's published figure (its README, XYZ + intensity, zstd): 0.51 of raw in 1.6 ms");
    println!("  goal: >= 4 x fewer bytes than base64 f32, encode + decode <= 1 ms a sweep");
}

/// Prints the figures of each encoding on `sweeps`.
fn measure(what: &str, sweeps: &[Vec<[f32; 4]>]) {
    let points: f64 = sweeps.iter().map(|s| s.len() as f64).sum::<f64>() / sweeps.len() as f64;
    println!(
        "sweep_codec: {} sweeps, {what}, {points:.0} points a sweep on average (XYZ + intensity)",
        sweeps.len()
    );
    let raw: Vec<Vec<u8>> = sweeps.iter().map(|s| le_bytes(s)).collect();
    let raw_bytes = raw.iter().map(Vec::len).sum::<usize>() as f64 / raw.len() as f64;
    let mut base = 0.0;
    println!("  raw f32: {raw_bytes:.0} bytes a sweep");
    for e in [SweepEncoding::F32, SweepEncoding::F32Zstd, SweepEncoding::MmZstd] {
        let (mut enc_ms, mut dec_ms, mut both_ms, mut bytes) = (Vec::new(), Vec::new(), Vec::new(), 0usize);
        for _ in 0..3 {
            for r in &raw {
                let t = Instant::now();
                let p = PackedSweep::from_le_bytes(1.0, r, e).expect("packs");
                let enc = t.elapsed().as_secs_f64() * 1e3;
                let s = p.to_sweep();
                let t = Instant::now();
                let back = s.unpack().expect("unpacks");
                let dec = t.elapsed().as_secs_f64() * 1e3;
                std::hint::black_box(back);
                bytes += s.data.len();
                enc_ms.push(enc);
                dec_ms.push(dec);
                both_ms.push(enc + dec);
            }
        }
        let per = bytes as f64 / both_ms.len() as f64;
        if e == SweepEncoding::F32 {
            base = per;
        }
        println!(
            "  {:<9} {per:>8.0} bytes a sweep on the wire ({:.3} of raw f32, {:.1} x fewer than base64 f32); encode {:.3} ms, decode {:.3} ms, encode + decode p50 {:.3} ms, p99 {:.3} ms",
            e.as_str(),
            per / raw_bytes,
            base / per,
            pct(&mut enc_ms, 0.5),
            pct(&mut dec_ms, 0.5),
            pct(&mut both_ms, 0.5),
            pct(&mut both_ms, 0.99),
        );
    }
}
