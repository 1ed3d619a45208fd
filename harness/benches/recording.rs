//! What the episode recordings cost: every shipped scenario is run once (checked mode, the
//! scripted planner) to find the longest mission, then that scenario is run alternately with
//! and without the recorder, five times each, through the library (`RunOptions::record`).
//! Prints the sizes of `episode.mcap` and `episode.interface.mcap`, their size extrapolated to a
//! 30-minute mission (budget: 50 MB), the best wall times with and without recording and the
//! time recording adds (target: at most 10 %), and the processor time (all threads, from
//! `/proc/self/stat`, 10 ms ticks) summed over the runs of each kind, which a machine shared
//! with other work disturbs less than wall time.
//!
//! `cargo bench -p acres-harness --bench recording`

use std::path::{Path, PathBuf};
use std::time::Instant;

use acres_harness::planner::scripted::ScriptedClient;
use acres_harness::planning::costs::CostTable;
use acres_harness::recording::{EPISODE_FILE, INTERFACE_FILE};
use acres_harness::run::{run_scenario, Planner, RunOptions};
use acres_harness::scenario::{self, Scenario};

const RUNS: usize = 5;
const BUDGET_MB_PER_30_MIN: f64 = 50.0;

/// Processor time of this process so far, all threads, s (Linux; 0 elsewhere).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command name (which ends with ')') come the state (field 3), ..., utime (field
    // 14) and stime (field 15), in ticks of 1/100 s.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn run(sc: &Scenario, root: &Path, out: &Path, record: bool) -> (f64, f64, PathBuf) {
    let table = CostTable::load(&root.join("scenarios/costs"), &sc.map_data.name, sc.condition.as_str())
        .expect("the cost table loads");
    let opts = RunOptions { record, ..RunOptions::new(out) };
    let client = ScriptedClient::new(2.0);
    let t0 = Instant::now();
    let outcome = run_scenario(sc, &opts, Planner::Model(&client), table).expect("the run runs");
    (t0.elapsed().as_secs_f64(), outcome.t_s, outcome.folder)
}

fn size_mb(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::temp_dir().join(format!("acres-bench-recording-{}", std::process::id()));
    let scenarios = scenario::load_all(&[root.join("scenarios")], &root.join("scenarios/maps"))
        .expect("the shipped scenarios load");
    let mut longest: Option<(f64, &Scenario)> = None;
    for sc in &scenarios {
        let (_, t_s, _) = run(sc, &root, &out, false);
        if longest.is_none_or(|(t, _)| t_s > t) {
            longest = Some((t_s, sc));
        }
    }
    let (mission_s, sc) = longest.expect("a shipped scenario");
    let (mut with_s, mut without_s) = (f64::INFINITY, f64::INFINITY);
    let (mut with_cpu_s, mut without_cpu_s) = (0.0, 0.0);
    for _ in 0..RUNS {
        let c0 = cpu_s();
        with_s = with_s.min(run(sc, &root, &out, true).0);
        let c1 = cpu_s();
        without_s = without_s.min(run(sc, &root, &out, false).0);
        with_cpu_s += c1 - c0;
        without_cpu_s += cpu_s() - c1;
    }
    // A recorded run last (each run replaces the folder of the one before).
    let (_, _, folder) = run(sc, &root, &out, true);
    let episode_mb = size_mb(&folder.join(EPISODE_FILE));
    let interface_mb = size_mb(&folder.join(INTERFACE_FILE));
    let per_30_min = (episode_mb + interface_mb) * 1800.0 / mission_s;
    let _ = std::fs::remove_dir_all(&out);
    println!("recording: longest shipped scenario {} ({mission_s:.0} mission s)", sc.id);
    println!(
        "recording: episode.mcap {episode_mb:.2} MB, episode.interface.mcap {interface_mb:.2} MB; \
         {per_30_min:.1} MB per 30 mission min (budget {BUDGET_MB_PER_30_MIN:.0} MB)"
    );
    println!(
        "recording: best of {RUNS}: {with_s:.3} s with, {without_s:.3} s without; recording adds {:.1} % (target <= 10 %)",
        (with_s / without_s - 1.0) * 100.0
    );
    println!(
        "recording: processor time of {RUNS} runs: {with_cpu_s:.2} s with, {without_cpu_s:.2} s without; \
         recording costs {:.2} ms per mission s",
        (with_cpu_s - without_cpu_s) / RUNS as f64 / mission_s * 1000.0
    );
}
