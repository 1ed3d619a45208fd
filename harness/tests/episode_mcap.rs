//! The episode recordings of a core run, read by independent readers: the Python `mcap` stream
//! reader with CRC validation on, the Python `mcap` +
//! `mcap-ros2-support` readers and `rosbags` decode every message of `episode.mcap` and
//! `episode.interface.mcap` (through `tests/mcap_readers.py`) and their counts equal the files'
//! Statistics; a run killed with SIGKILL, paced or not, leaves `.part` files these readers
//! recover up to the kill, within the bound `docs/run-folder.md` states. Real processes, real
//! files.
//!
//! The tests that read with Python are ignored by the plain `cargo test` and run by the test
//! command, which installs the readers; run without them, they fail (`tests/support/require.rs`).

#[path = "../../tests/support/require.rs"]
mod require;
mod support;
use support::{root, Child, TempDir};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use acres_harness::planners::planning::costs::CostTable;
use acres_harness::planners::scripted::ScriptedClient;
use acres_harness::run::{run_scenario, Planner, RunOptions};
use acres_harness::runfolder::recording::bag::{CHUNK_SIZE_BYTES, FLUSH_EVERY_S, FLUSH_MIN_WALL_S};
use acres_harness::runfolder::recording::sink::{BATCH_ITEMS, QUEUE_BATCHES, SEND_EVERY_S};
use acres_harness::runfolder::recording::Record;
use acres_harness::runfolder::{validate_folder, Status};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcap_readers.py");

/// Fails the test unless the readers can be imported.
fn readers_available() {
    require::python("mcap, mcap_ros2.decoder, rosbags.rosbag2, rosbags.typesys");
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Runs the readers' script; one JSON object per file.
fn readers(mode: &str, files: &[PathBuf]) -> Vec<Value> {
    let o =
        Command::new(require::python3()).arg(SCRIPT).arg(mode).args(files).output().expect("python3 runs");
    assert!(o.status.success(), "mcap_readers.py {mode} failed: {}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn count(report: &Value, topic: &str) -> u64 {
    report["topics"][topic].as_u64().unwrap_or(0)
}

/// The mission time of the last pose row of `run.jsonl`, s.
fn last_pose_t(run_file: &Path) -> f64 {
    last_pose_in(&std::fs::read_to_string(run_file).unwrap_or_default())
}

/// The mission time of the last pose row in the last 16 kB of `run.jsonl` (cheap to poll), s.
fn last_pose_t_tail(run_file: &Path) -> f64 {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(run_file) else { return 0.0 };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(16 * 1024)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    last_pose_in(&String::from_utf8_lossy(&buf))
}

/// The log times of the sweeps whose clouds [`CloudRate`] keeps, replayed on the `/scan`
/// messages of `episode`, and how many of those scans see something.
fn kept_clouds(episode: &Path) -> (Vec<u64>, u64) {
    use acres_msgs::Message;
    let bytes = std::fs::read(episode).unwrap();
    let mut rate = acres_harness::runfolder::recording::CloudRate::default();
    let (mut kept, mut seeing) = (Vec::new(), 0);
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        if m.channel.topic == "/scan" {
            let scan = acres_msgs::sensor_msgs::LaserScan::decode(&m.data).unwrap();
            let sees = scan.ranges.iter().any(|r| r.is_finite());
            seeing += u64::from(sees);
            if rate.keep(sees) {
                kept.push(m.log_time);
            }
        }
    }
    (kept, seeing)
}

/// The log times of the `/lidar/points` messages of `episode`.
fn cloud_times(episode: &Path) -> Vec<u64> {
    let bytes = std::fs::read(episode).unwrap();
    mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(Result::unwrap)
        .filter(|m| m.channel.topic == "/lidar/points")
        .map(|m| m.log_time)
        .collect()
}

/// The control step, s (20 Hz).
const STEP_S: f64 = 0.05;

fn last_pose_in(text: &str) -> f64 {
    text.lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "pose")
        .and_then(|v| v["t"].as_f64())
        .unwrap_or(0.0)
}

#[test]
fn recording_only_reads_the_world_a_run_without_it_has_the_same_digest() {
    let root = root();
    let sc = acres_harness::scenario::load(
        &root.join("scenarios/t2_07_person_in_the_field.json"),
        &root.join("scenarios/maps"),
    )
    .unwrap();
    let tmp = TempDir::new("digest");
    let mut outcomes = Vec::new();
    for record in [Record::All, Record::None] {
        let table =
            CostTable::load(&root.join("scenarios/costs"), &sc.map_data.name, sc.condition.as_str()).unwrap();
        let opts = RunOptions { record, ..RunOptions::new(tmp.0.join(format!("record-{record}"))) };
        let outcome = run_scenario(&sc, &opts, Planner::Model(&ScriptedClient::new(2.0)), table).unwrap();
        assert_eq!(outcome.folder.join("episode.mcap").exists(), record == Record::All);
        outcomes.push(outcome);
    }
    assert_eq!(outcomes[0].digest, outcomes[1].digest);
    assert_eq!((outcomes[0].t_s, &outcomes[0].end), (outcomes[1].t_s, &outcomes[1].end));
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    #[test]
    #[ignore = "needs the Python MCAP readers (mcap, mcap-ros2-support, rosbags): run by tools/test.sh"]
    fn both_recordings_of_a_core_run_decode_with_the_python_readers_and_match_their_statistics() {
        readers_available();
        let tmp = TempDir::new("full");
        let out = tmp.0.join("runs");
        let o = Command::new(env!("CARGO_BIN_EXE_acres-harness"))
            .args(["run", "--scenario", "scenarios/t2_06_truck_on_the_lane.json", "--quiet", "--out"])
            .arg(&out)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let folder = out.join("t2_06_truck_on_the_lane__checked__scripted");
        assert_eq!(validate_folder(&folder).status, Status::Ok);
        assert!(
            !folder.join("episode.mcap.part").exists()
                && !folder.join("episode.interface.mcap.part").exists()
        );
        let reports = readers("full", &[folder.join("episode.mcap"), folder.join("episode.interface.mcap")]);
        let (ep, itf) = (&reports[0], &reports[1]);
        let end_t = last_pose_t(&folder.join("run.jsonl"));
        // 20 Hz control steps from t = 0 to the end.
        let steps = count(ep, "/clock");
        assert!((steps as f64 - end_t * 20.0).abs() <= 21.0, "{steps} clock messages for {end_t} s");
        for topic in ["/tf", "/odom", "/acres/observation"] {
            assert_eq!(count(ep, topic), steps, "{topic}");
        }
        let scans = count(ep, "/scan");
        assert!((scans as f64 - end_t * 10.0).abs() <= 11.0, "{scans} scans for {end_t} s");
        // The clouds are the sweeps the rate keeps, judged on each sweep's scan as recorded: the
        // truck comes into view, so both rates occur.
        let (kept, seeing) = kept_clouds(&folder.join("episode.mcap"));
        assert_eq!(count(ep, "/lidar/points"), kept.len() as u64);
        assert_eq!(cloud_times(&folder.join("episode.mcap")), kept);
        assert!(seeing > 0 && seeing < scans, "{seeing} of {scans} scans see something");
        let clear_only = scans.div_ceil(acres_harness::runfolder::recording::POINTS_EVERY_SWEEPS_CLEAR);
        assert!(kept.len() as u64 > clear_only, "{} clouds, {clear_only} without the truck", kept.len());
        assert_eq!(count(ep, "/acres/map"), 1);
        assert_eq!(count(ep, "/tf_static"), 1);
        assert!(count(ep, "/acres/objects") >= end_t as u64);
        // The planner's timeline: the scripted planner wakes, calls, acts and plans.
        for topic in [
            "/acres/planner/wake",
            "/acres/planner/model_call",
            "/acres/planner/tool_call",
            "/acres/planner/plan_verdict",
        ] {
            assert!(count(ep, topic) > 0, "{topic}: {ep}");
        }
        let rows = std::fs::read_to_string(folder.join("run.jsonl")).unwrap();
        let rows_of =
            |ty: &str| rows.lines().filter(|l| l.contains(&format!("\"type\":\"{ty}\""))).count() as u64;
        assert_eq!(count(ep, "/acres/planner/wake"), rows_of("wake"));
        assert_eq!(count(ep, "/acres/planner/model_call"), rows_of("model_reply") + rows_of("model_error"));
        assert_eq!(count(ep, "/acres/planner/tool_call"), rows_of("tool"));
        assert_eq!(count(ep, "/acres/planner/plan_verdict"), rows_of("plan_check"));
        assert_eq!(count(ep, "/acres/events"), rows_of("event"));
        // The interface file: exactly its three channels, the same clock, observations and events.
        let mut topics: Vec<&String> = itf["topics"].as_object().unwrap().keys().collect();
        topics.sort();
        assert_eq!(topics, ["/acres/clock", "/acres/events", "/acres/observation"]);
        assert_eq!(count(itf, "/acres/clock"), steps);
        assert_eq!(count(itf, "/acres/observation"), steps);
        assert_eq!(count(itf, "/acres/events"), count(ep, "/acres/events"));
        assert_eq!(ep["rosbags_messages"], ep["messages"]);
        assert_eq!(itf["rosbags_messages"], itf["messages"]);
        // Both files passed the stream reader's CRC validation (mcap_readers.py fails otherwise);
        // their DataEnd CRC is computed exactly when the bag computes CRCs (0: "not computed").
        for r in [ep, itf] {
            assert_eq!(
                r["data_section_crc"].as_u64() != Some(0),
                acres_harness::runfolder::recording::bag::CRCS,
                "{r}"
            );
        }
    }

    #[test]
    #[ignore = "needs the Python MCAP readers (mcap, mcap-ros2-support, rosbags): run by tools/test.sh"]
    fn a_run_killed_with_sigkill_leaves_recordings_the_readers_recover_up_to_the_kill() {
        readers_available();
        let tmp = TempDir::new("killed");
        let out = tmp.0.join("runs");
        // 20 mission seconds per wall second: the kill comes after about 60 s of mission time.
        let child = Command::new(env!("CARGO_BIN_EXE_acres-harness"))
            .args([
                "run",
                "--scenario",
                "scenarios/t2_08_two_stops_and_a_deadline.json",
                "--pace",
                "20",
                "--quiet",
            ])
            .arg("--out")
            .arg(&out)
            .current_dir(root())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut child = Child(child);
        // A run in progress writes into <name>.partial (renamed when it ends): the kill finds it there.
        let folder = out.join("t2_08_two_stops_and_a_deadline__checked__scripted.partial");
        let run_file = folder.join("run.jsonl");
        support::poll(Duration::from_secs(60), Duration::from_millis(50), || {
            (last_pose_t(&run_file) >= 60.0).then_some(())
        });
        child.0.kill().unwrap(); // SIGKILL
        child.0.wait().unwrap();
        let killed_at_s = last_pose_t(&run_file);
        assert!(killed_at_s >= 60.0, "the run did not reach 60 s of mission time before the deadline");
        assert!(!folder.join("episode.mcap").exists(), "a killed run has no finished recording");
        assert!(matches!(validate_folder(&folder).status, Status::Incomplete(_)));
        let reports = readers(
            "recover",
            &[folder.join("episode.mcap.part"), folder.join("episode.interface.mcap.part")],
        );
        // The bound of docs/run-folder.md at 20 mission s per wall s: the open chunk (it spans
        // FLUSH_EVERY_S of mission time, or FLUSH_MIN_WALL_S of wall time, before the time rule may
        // close it, looked at each 0.1 s), the batch being filled (SEND_EVERY_S of wall time) and a
        // step; the writer keeps up with a paced run, so no batch waits. The pose row read is up to
        // 0.5 s behind the kill.
        let pace = 20.0;
        let bound_s = FLUSH_EVERY_S.max(FLUSH_MIN_WALL_S * pace) + 0.1 + SEND_EVERY_S * pace + STEP_S;
        for r in &reports {
            let last_s = r["last_log_time_ns"].as_u64().unwrap() as f64 * 1e-9;
            assert!(
                last_s >= killed_at_s - bound_s && last_s <= killed_at_s + 1.0,
                "recovered up to {last_s} s, killed at {killed_at_s} s (bound {bound_s} s): {r}"
            );
            assert_eq!(r["rosbags_messages"], r["messages"]);
        }
        let ep = &reports[0];
        for topic in
            ["/clock", "/tf", "/odom", "/scan", "/lidar/points", "/acres/observation", "/acres/planner/wake"]
        {
            assert!(count(ep, topic) > 0, "{topic}: {ep}");
        }
        assert!(count(&reports[1], "/acres/observation") > 0);
        // The viewer reads the same .part file up to the same chunk: objects each second, returns
        // each half second.
        let w = acres_harness::review::episode::read(&folder.join("episode.mcap.part")).unwrap();
        let last_s = reports[0]["last_log_time_ns"].as_u64().unwrap() as f64 * 1e-9;
        assert!(!w.finished && w.returns_from == "/scan", "{} {}", w.file, w.returns_from);
        let last_objects = w.objects.last().map_or(0.0, |o| o.t_s);
        assert!(
            last_objects <= last_s && last_objects >= last_s - 1.5,
            "objects to {last_objects} s of {last_s} s"
        );
        let last_returns = w.returns.last().map_or(0.0, |r| r.t_s);
        assert!(
            last_returns <= last_s && last_returns >= last_s - 1.0,
            "returns to {last_returns} s of {last_s} s"
        );
    }

    #[test]
    #[ignore = "needs the Python MCAP readers (mcap, mcap-ros2-support, rosbags): run by tools/test.sh"]
    fn an_unpaced_run_killed_with_sigkill_loses_at_most_a_chunk_and_the_queued_batches() {
        readers_available();
        let tmp = TempDir::new("killed-unpaced");
        let out = tmp.0.join("runs");
        // A run in progress writes into <name>.partial (renamed when it ends): the kill finds it there.
        let folder = out.join("t1_05_instruction_with_an_order__checked__scripted.partial");
        let run_file = folder.join("run.jsonl");
        // No pace: the run goes as fast as it can (thousands of mission s per wall s) and the writer
        // thread lags behind it; killed after 300 s of mission time. A machine fast enough to end
        // the run before the poll sees 300 s gets two more tries.
        let mut killed_at_s = None;
        for _ in 0..3 {
            let child = Command::new(env!("CARGO_BIN_EXE_acres-harness"))
                .args([
                    "run",
                    "--scenario",
                    "scenarios/t1_05_instruction_with_an_order.json",
                    "--quiet",
                    "--out",
                ])
                .arg(&out)
                .current_dir(root())
                .stdout(Stdio::null())
                .spawn()
                .unwrap();
            let mut child = Child(child);
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline && last_pose_t_tail(&run_file) < 300.0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            child.0.kill().unwrap(); // SIGKILL
            child.0.wait().unwrap();
            // A run that ended before the kill has no partial folder left (it took its name).
            let rows = std::fs::read_to_string(&run_file).unwrap_or_default();
            if run_file.exists() && !rows.contains("\"type\":\"end\"") {
                killed_at_s = Some(last_pose_t(&run_file));
                break;
            }
        }
        let killed_at_s = killed_at_s.expect("the run was killed before its end in one of three tries");
        assert!(killed_at_s >= 300.0, "killed at {killed_at_s} s");
        let reports = readers("recover", &[folder.join("episode.mcap.part")]);
        let r = &reports[0];
        let last_s = r["last_log_time_ns"].as_u64().unwrap() as f64 * 1e-9;
        // The bound of docs/run-folder.md: one chunk of CHUNK_SIZE_BYTES (in mission time at the
        // rate this recording has), the batches queued for the writer and the one being filled (a
        // control step is one item), a step, and the half second the pose rows lag.
        let bytes_per_s = r["data_bytes"].as_f64().unwrap() / last_s.max(1.0);
        let chunk_s = CHUNK_SIZE_BYTES as f64 / bytes_per_s;
        let queued_s = ((QUEUE_BATCHES + 1) * BATCH_ITEMS) as f64 * STEP_S;
        let bound_s = chunk_s + queued_s + STEP_S + 0.5;
        assert!(
        last_s >= killed_at_s - bound_s && last_s <= killed_at_s + 1.0,
        "recovered up to {last_s} s, killed at {killed_at_s} s (bound {bound_s:.1} s: a chunk is {chunk_s:.1} s): {r}"
    );
        assert_eq!(r["rosbags_messages"], r["messages"]);
        eprintln!("unpaced kill at {killed_at_s} s: recovered up to {last_s:.2} s (bound {bound_s:.1} s)");
    }
}
