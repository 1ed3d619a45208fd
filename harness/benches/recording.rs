//! What the episode recordings cost: every shipped scenario is run once (checked mode, the
//! scripted planner) to find the longest mission, then that scenario is run alternately with
//! and without the recorder, [`RUNS`] times each, through the library (`RunOptions::record`).
//! Prints the sizes of `episode.mcap` and `episode.interface.mcap`, their size extrapolated to a
//! 30-minute mission (budget: 50 MB), the best and the median wall times with and without
//! recording and the time recording adds (target: at most 10 %), and the processor time, which
//! a machine shared with other work disturbs less than wall time: the run's own thread (the
//! loop, from `/proc/thread-self/schedstat`, nanoseconds), the recorder's writer thread (the
//! same, added up by the thread as it ends: `recording::sink::WRITER_CPU_NS`) and the whole
//! process (all threads, from `/proc/self/stat`, 10 ms ticks, summed over the runs of each kind).
//!
//! `cargo bench -p acres-harness --bench recording` (`ACRES_BENCH_SCENARIO=t1_05` skips the
//! search for the longest scenario and runs the one whose id starts so).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use acres_harness::planners::planning::costs::CostTable;
use acres_harness::planners::scripted::ScriptedClient;
use acres_harness::run::{run_scenario, Planner, RunOptions};
use acres_harness::runfolder::recording::sink::{thread_cpu_ns, WRITER_CPU_NS};
use acres_harness::runfolder::recording::{Record, EPISODE_FILE, INTERFACE_FILE};
use acres_harness::scenario::{self, Scenario};

/// Runs of each kind (`ACRES_BENCH_RUNS` sets another number).
const RUNS: usize = 15;
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

/// Processor time of the calling thread so far, s (Linux; 0 elsewhere).
fn thread_cpu_s() -> f64 {
    thread_cpu_ns() as f64 * 1e-9
}

/// One run: wall time, the run thread's and the recorder's writer thread's processor time,
/// mission time, the folder.
struct Run {
    wall_s: f64,
    thread_cpu_s: f64,
    writer_cpu_s: f64,
    mission_s: f64,
    folder: PathBuf,
}

fn run(sc: &Scenario, root: &Path, out: &Path, record: bool) -> Run {
    let table = CostTable::load(&root.join("scenarios/costs"), &sc.map_data.name, sc.condition.as_str())
        .expect("the cost table loads");
    let record = if record { Record::All } else { Record::None };
    let opts = RunOptions { record, ..RunOptions::new(out) };
    let client = ScriptedClient::new(2.0);
    let c0 = thread_cpu_s();
    let w0 = WRITER_CPU_NS.load(Ordering::Relaxed);
    let t0 = Instant::now();
    let outcome = run_scenario(sc, &opts, Planner::Model(&client), table).expect("the run runs");
    Run {
        wall_s: t0.elapsed().as_secs_f64(),
        thread_cpu_s: thread_cpu_s() - c0,
        writer_cpu_s: (WRITER_CPU_NS.load(Ordering::Relaxed) - w0) as f64 * 1e-9,
        mission_s: outcome.t_s,
        folder: outcome.folder,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn size_mb(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::temp_dir().join(format!("acres-bench-recording-{}", std::process::id()));
    let scenarios = scenario::load_all(&[root.join("scenarios")], &root.join("scenarios/maps"))
        .expect("the shipped scenarios load");
    let only = std::env::var("ACRES_BENCH_SCENARIO").ok();
    let mut longest: Option<(f64, &Scenario)> = None;
    for sc in scenarios.iter().filter(|sc| only.as_ref().is_none_or(|o| sc.id.starts_with(o.as_str()))) {
        let t_s = run(sc, &root, &out, false).mission_s;
        if longest.is_none_or(|(t, _)| t_s > t) {
            longest = Some((t_s, sc));
        }
    }
    let (mission_s, sc) = longest.expect("a shipped scenario");
    let runs = std::env::var("ACRES_BENCH_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(RUNS).max(1);
    let (mut with, mut without) = (Vec::new(), Vec::new());

    let (mut with_cpu_s, mut without_cpu_s) = (0.0, 0.0);
    for _ in 0..runs {
        let c0 = cpu_s();
        with.push(run(sc, &root, &out, true));
        let c1 = cpu_s();
        without.push(run(sc, &root, &out, false));
        with_cpu_s += c1 - c0;
        without_cpu_s += cpu_s() - c1;
    }
    // A recorded run last (each run replaces the folder of the one before).
    let folder = run(sc, &root, &out, true).folder;
    let episode_mb = size_mb(&folder.join(EPISODE_FILE));
    let interface_mb = size_mb(&folder.join(INTERFACE_FILE));
    let per_30_min = (episode_mb + interface_mb) * 1800.0 / mission_s;
    let _ = std::fs::remove_dir_all(&out);
    let wall = |runs: &[Run]| runs.iter().map(|r| r.wall_s).collect::<Vec<f64>>();
    let (best_with, best_without) = (
        wall(&with).into_iter().fold(f64::INFINITY, f64::min),
        wall(&without).into_iter().fold(f64::INFINITY, f64::min),
    );
    let (median_with, median_without) = (median(wall(&with)), median(wall(&without)));
    let thread_ms = |runs: &[Run]| median(runs.iter().map(|r| r.thread_cpu_s * 1000.0).collect());
    let n = runs as f64;
    println!("recording: longest shipped scenario {} ({mission_s:.0} mission s)", sc.id);
    println!(
        "recording: episode.mcap {episode_mb:.2} MB, episode.interface.mcap {interface_mb:.2} MB; \
         {per_30_min:.1} MB per 30 mission min (budget {BUDGET_MB_PER_30_MIN:.0} MB)"
    );
    println!(
        "recording: wall time, best of {runs}: {best_with:.3} s with, {best_without:.3} s without: recording adds {:.1} % (target <= 10 %)",
        (best_with / best_without - 1.0) * 100.0
    );
    println!(
        "recording: wall time, median of {runs}: {median_with:.3} s with, {median_without:.3} s without: recording adds {:.1} %",
        (median_with / median_without - 1.0) * 100.0
    );
    // Each recorded run is followed by an unrecorded one: the median of the pairs' differences
    // follows the machine's drift less than the difference of the medians.
    let paired = |f: fn(&Run) -> f64| median(with.iter().zip(&without).map(|(a, b)| f(a) - f(b)).collect());
    println!(
        "recording: median of {runs} pairs' differences: wall {:+.1} ms ({:+.1} % of the unrecorded median), the run's thread {:+.1} ms",
        paired(|r| r.wall_s * 1000.0),
        paired(|r| r.wall_s) / median_without * 100.0,
        paired(|r| r.thread_cpu_s * 1000.0)
    );
    let writer_ms = median(with.iter().map(|r| r.writer_cpu_s * 1000.0).collect());
    println!(
        "recording: processor time a run (median): the run's thread {:.1} ms with, {:.1} ms without; \
         the writer thread {writer_ms:.1} ms ({:.2} of the unrecorded run's thread)",
        thread_ms(&with),
        thread_ms(&without),
        writer_ms / thread_ms(&without)
    );
    println!(
        "recording: processor time a run (mean, all threads): {:.0} ms with, {:.0} ms without; \
         recording costs {:.0} ms, {:.3} ms per mission s",
        with_cpu_s / n * 1000.0,
        without_cpu_s / n * 1000.0,
        (with_cpu_s - without_cpu_s) / n * 1000.0,
        (with_cpu_s - without_cpu_s) / n / mission_s * 1000.0
    );
}
