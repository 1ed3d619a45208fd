//! What sweeps cost, with the real binary: prints figures, asserts no timing.
//!
//! 1. The shipped suite (10 scenarios, checked mode, the scripted planner, `--workers 2`) for
//!    each `--record` choice, side by side in one run, interleaved over `ACRES_BENCH_ROUNDS`
//!    rounds (default 3): median wall time, mission seconds per wall second, bytes per run.
//! 2. The sweep's overhead per run against single runs: the same 10 runs as a sweep (`sweep
//!    --workers 2`, record all) against `run --workers 2`, and a re-run of the finished sweep
//!    (the resume check alone: plan, validate each run, skip).
//! 3. The merge time of a leaderboard over 10,000 run folders (a generated fixture: copies of one
//!    finished run's rows at 10,000 sweep places).
//!
//! `cargo bench -p acres-harness --bench sweep`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_acres-harness")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn harness(args: &[&str]) -> f64 {
    let t0 = Instant::now();
    let o = Command::new(exe()).args(args).current_dir(root()).output().expect("the harness runs");
    let wall = t0.elapsed().as_secs_f64();
    assert!(
        o.status.success() || o.status.code() == Some(1),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    wall
}

fn bytes_below(p: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else { return 0 };
    rd.flatten()
        .map(|e| {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                bytes_below(&e.path())
            } else {
                m.len()
            }
        })
        .sum()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn mission_s(out: &Path) -> f64 {
    let s = Command::new(exe()).args(["score", "--json"]).arg(out).output().expect("score runs");
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).expect("score --json");
    v.as_array().unwrap().iter().map(|l| l["score"]["time_s"].as_f64().unwrap()).sum()
}

fn main() {
    let rounds: usize = std::env::var("ACRES_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let tmp = std::env::temp_dir().join(format!("acres-bench-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let scenarios = root().join("scenarios");
    records(&tmp, &scenarios, rounds);
    overhead(&tmp, &scenarios, rounds);
    merge(&tmp, rounds);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// 1. The suite for each recording choice, interleaved.
fn records(tmp: &Path, scenarios: &Path, rounds: usize) {
    let choices = ["all", "interface", "none"];
    let mut walls = vec![Vec::new(); choices.len()];
    let mut bytes = vec![0u64; choices.len()];
    let mut mission = 0.0;
    for _ in 0..rounds {
        for (i, c) in choices.iter().enumerate() {
            let out = tmp.join(format!("run-{c}"));
            let _ = std::fs::remove_dir_all(&out);
            let o = out.display().to_string();
            let s = scenarios.display().to_string();
            walls[i].push(harness(&[
                "run",
                "--scenario",
                &s,
                "--out",
                &o,
                "--workers",
                "2",
                "--quiet",
                "--record",
                c,
            ]));
            bytes[i] = bytes_below(&out);
            mission = mission_s(&out);
        }
    }
    for (i, c) in choices.iter().enumerate() {
        let w = median(walls[i].clone());
        println!(
            "sweep: --record {c:<9} suite median wall {w:.2} s over {rounds} rounds, {:.0} mission s per wall s, {:.2} MB per run",
            mission / w,
            bytes[i] as f64 / 10.0 / 1e6
        );
    }
}

/// 2. The sweep's overhead: the same 10 runs as `run` and as `sweep` (record all).
fn overhead(tmp: &Path, scenarios: &Path, rounds: usize) {
    let spec = tmp.join("suite.toml");
    std::fs::write(
        &spec,
        format!("scenarios = [\"{}\"]\nmodes = [\"checked\"]\nworkers = 2\n", scenarios.display()),
    )
    .unwrap();
    let (mut single, mut swept, mut resumed) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let run_out = tmp.join("single");
        let _ = std::fs::remove_dir_all(&run_out);
        let s = scenarios.display().to_string();
        single.push(harness(&[
            "run",
            "--scenario",
            &s,
            "--out",
            &run_out.display().to_string(),
            "--workers",
            "2",
            "--quiet",
        ]));
        let sweep_out = tmp.join("swept");
        let _ = std::fs::remove_dir_all(&sweep_out);
        let so = sweep_out.display().to_string();
        let sp = spec.display().to_string();
        swept.push(harness(&["sweep", &sp, "--out", &so, "--quiet"]));
        resumed.push(harness(&["sweep", &sp, "--out", &so, "--quiet"]));
    }
    let (a, b, r) = (median(single), median(swept), median(resumed));
    println!(
        "sweep: 10 runs: run --workers 2 {a:.2} s, sweep --workers 2 {b:.2} s: {:+.1} ms per run ({:+.1} %); \
         re-running the finished sweep (plan, validate, skip) {r:.2} s, {:.1} ms per run",
        (b - a) * 100.0,
        (b / a - 1.0) * 100.0,
        r * 100.0
    );
}

/// 3. The merge of 10,000 run folders (the template: a run of the overhead's sweep).
fn merge(tmp: &Path, rounds: usize) {
    let template = std::fs::read_dir(tmp.join("swept/scripted/checked/vehicle/t1_01_one_field/1"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let rows = std::fs::read_to_string(template.join("run.jsonl")).unwrap();
    let (first, rest) = rows.split_once('\n').unwrap();
    let big = tmp.join("big");
    let t0 = Instant::now();
    for model in 0..10 {
        for sc in 0..100 {
            for rep in 1..=10 {
                let (m, s) = (format!("m{model}"), format!("s{sc:03}"));
                let dir = big.join(format!("{m}/checked/vehicle/{s}/{rep}/{s}__checked__{m}"));
                std::fs::create_dir_all(&dir).unwrap();
                let mut run: serde_json::Value = serde_json::from_str(first).unwrap();
                run["model"] = serde_json::json!(m);
                run["scenario"] = serde_json::json!(s);
                std::fs::write(dir.join("run.jsonl"), format!("{run}\n{rest}")).unwrap();
            }
        }
    }
    let made = t0.elapsed().as_secs_f64();
    let mut merges = Vec::new();
    for _ in 0..rounds {
        merges.push(harness(&[
            "leaderboard",
            &big.display().to_string(),
            "--json",
            &tmp.join("big.json").display().to_string(),
        ]));
    }
    println!(
        "sweep: leaderboard of 10,000 run folders ({:.1} MB of rows; fixture made in {made:.1} s): median {:.2} s over {rounds}",
        bytes_below(&big) as f64 / 1e6,
        median(merges)
    );
}
