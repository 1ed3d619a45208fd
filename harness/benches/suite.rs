//! The shipped suite's speed: `acres-harness run --scenario scenarios --workers 2` (checked mode,
//! the scripted planner, pictures and run logs included), timed end to end as a user runs it.
//! Prints the wall time, the aggregate mission seconds per wall second, and the ratio to the
//! 500× target.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let exe = env!("CARGO_BIN_EXE_acres-harness");
    let out = std::env::temp_dir().join(format!("acres-bench-suite-{}", std::process::id()));
    let mut best = f64::INFINITY;
    let mut mission_s = 0.0;
    for _ in 0..3 {
        let _ = std::fs::remove_dir_all(&out);
        let t0 = Instant::now();
        let o = Command::new(exe)
            .args(["run", "--scenario", "scenarios", "--out"])
            .arg(&out)
            .args(["--workers", "2", "--quiet"])
            .current_dir(&root)
            .output()
            .expect("the harness runs");
        let wall = t0.elapsed().as_secs_f64();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        best = best.min(wall);
        let s = Command::new(exe).args(["score", "--json"]).arg(&out).output().expect("score runs");
        let v: serde_json::Value = serde_json::from_slice(&s.stdout).expect("score --json");
        mission_s = v.as_array().unwrap().iter().map(|l| l["score"]["time_s"].as_f64().unwrap()).sum();
    }
    let frames = std::fs::read_dir(&out)
        .map(|d| {
            d.flatten()
                .map(|e| std::fs::read_dir(e.path().join("frames")).map_or(0, |f| f.count()))
                .sum::<usize>()
        })
        .unwrap_or(0);
    let _ = std::fs::remove_dir_all(&out);
    let ratio = mission_s / best;
    println!("suite: 10 scenarios, {mission_s:.0} mission s, {frames} pictures, best wall {best:.2} s (--workers 2)");
    println!("suite: {ratio:.0} mission s per wall s ({:.1}x the 500x target)", ratio / 500.0);
}
