//! The viewer and the video end to end, through the binary: a real run made by the harness,
//! the viewer served on 127.0.0.1 and asked with raw TCP requests (paths out of the served
//! folder are refused), and a real MP4 made by the system's ffmpeg, checked with ffprobe against
//! the duration computed here from the run's rows (whole, and `--from`/`--to`). The World of a
//! recorded run has the objects and LiDAR returns of its `episode.mcap` (in the API and in the
//! pixels of the picture the video draws); `--world bag` refuses a folder without one; the video
//! frame's timeline spans `--from` to `--to`.
//!
//! The video tests need `ffmpeg` and `ffprobe`: ignored by the plain `cargo test`, run (and
//! failing without them) by `tools/test.sh`, which installs them.

#[path = "../../tests/support/require.rs"]
mod require;
mod support;
use support::{root, TempDir};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use acres_harness::review::episode::Cache;
use acres_harness::review::loaded::{load, Loaded};
use acres_harness::review::source::WorldView;
use acres_harness::review::video::draw::{cursor_x, Drawer, TIMELINE_LEFT_PX, TIMELINE_RIGHT_PX, WIDTH_PX};
use acres_harness::review::video::WorldChoice;
use acres_harness::runfolder::Row;

fn harness() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_acres-harness"));
    c.current_dir(root());
    c
}

/// A child process killed on drop.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs one shipped scenario into `out`; returns its run folder.
fn make_run(out: &Path, scenario: &str) -> PathBuf {
    let o = harness().args(["run", "--scenario", scenario, "--out"]).arg(out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out).unwrap().flatten().map(|e| e.path()).collect();
    dirs.sort();
    dirs.pop().unwrap()
}

/// Starts `view` and returns the guard and the `host:port` of its URL (the first line).
fn start_view(args: &[&str]) -> (Guard, String) {
    let mut child =
        harness().arg("view").args(args).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with('/'), "first line is the URL: {url:?}");
    (Guard(child), url.trim_start_matches("http://").trim_end_matches('/').to_string())
}

/// Sends a raw request line and returns (status, body).
fn raw(addr: &str, target: &str) -> (u16, Vec<u8>) {
    raw_as(addr, &format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n"))
}

/// Sends a raw request head and returns (status, body).
fn raw_as(addr: &str, request: &str) -> (u16, Vec<u8>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut s = loop {
        match TcpStream::connect(addr) {
            Ok(s) => break s,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("cannot connect to {addr}: {e}"),
        }
    };
    s.write_all(request.as_bytes()).unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    let at = buf.windows(4).position(|w| w == b"\r\n\r\n").expect("a head");
    let head = String::from_utf8_lossy(&buf[..at]).to_string();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, buf[at + 4..].to_vec())
}

#[test]
fn the_viewer_serves_the_run_and_refuses_paths_out_of_the_folder() {
    let tmp = TempDir::new("serve");
    let run = make_run(&tmp.0.join("runs"), "scenarios/t1_03_time_limit_excludes_a_field.json");
    let name = run.file_name().unwrap().to_string_lossy().to_string();
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc", run.join("escape")).unwrap();
    let (_g, addr) = start_view(&[tmp.0.join("runs").to_str().unwrap()]);

    let (s, body) = raw(&addr, "/");
    assert_eq!(s, 200);
    assert!(String::from_utf8_lossy(&body).contains("What the Planner Sees"));
    let (s, body) = raw(&addr, "/api/index");
    assert_eq!(s, 200);
    let index: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(index["runs"][0]["folder"], name.as_str());
    assert_eq!(index["single"], false);
    let (s, body) = raw(&addr, &format!("/api/run?run={name}"));
    assert_eq!(s, 200);
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["head"]["scenario"], "t1_03_time_limit_excludes_a_field");
    assert!(v["world"]["track"].as_array().unwrap().len() > 100);
    let refused = v["timeline"]["verdicts"].as_array().unwrap().iter().position(|x| x["accepted"] == false);
    let i = refused.expect("the scenario's first plan is refused");
    assert!(v["verdict_places"][i].is_array(), "a refused plan has a place");
    let (s, png) = raw(&addr, &format!("/api/verdict.png?run={name}&i={i}"));
    assert_eq!((s, &png[1..4]), (200, &b"PNG"[..]));
    let (s, png) = raw(&addr, &format!("/files/{name}/frames/f0001.png"));
    assert_eq!((s, &png[1..4]), (200, &b"PNG"[..]));

    for bad in [
        "/files/../../../../etc/passwd".to_string(),
        "/files/%2e%2e/%2e%2e/%2e%2e/etc/passwd".into(),
        "/files/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd".into(),
        "/files//etc/passwd".into(),
        "/files/%2Fetc%2Fpasswd".into(),
        format!("/files/{name}/escape/passwd"),
        "/api/run?run=..%2F..".into(),
        "/api/run?run=%2Fetc".into(),
    ] {
        let (s, body) = raw(&addr, &bad);
        let body = String::from_utf8_lossy(&body).to_string();
        assert_eq!(s, 403, "{bad} -> {s} {body}");
        assert!(body.starts_with("forbidden: "), "{bad}: a clear body: {body}");
        assert!(!body.contains("root:"), "{bad}: no file content");
    }
    let (s, body) = raw(&addr, &format!("/files/{name}/frames/f9999.png"));
    assert_eq!(s, 404);
    assert!(String::from_utf8_lossy(&body).starts_with("not found: "));

    // DNS rebinding: only the address bound is a Host (the three names of loopback).
    let port = addr.rsplit(':').next().unwrap();
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let (s, _) = raw_as(&addr, &format!("GET /api/index HTTP/1.1\r\nHost: {host}\r\n\r\n"));
        assert_eq!(s, 200, "{host}");
    }
    for head in [
        "Host: attacker.example".to_string(),
        format!("Host: attacker.example:{port}"),
        "Host: 127.0.0.1:1".into(),
        "X-None: no host".into(),
    ] {
        let (s, body) = raw_as(&addr, &format!("GET /api/run?run={name} HTTP/1.1\r\n{head}\r\n\r\n"));
        let body = String::from_utf8_lossy(&body).to_string();
        assert_eq!(s, 403, "{head} -> {s}");
        assert!(body.starts_with("Forbidden: "), "{head}: {body}");
        assert!(!body.contains("t1_03"), "{head}: nothing of the run");
    }
}

#[test]
fn view_answers_bad_input_with_exit_2() {
    let o = harness().args(["view", "/no/such/folder"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = harness().args(["view", "scenarios", "--world", "game"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no packaged game"));
    let o = harness().args(["video", "scenarios", "--out", "/tmp/x.mp4"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a run folder"));
}

/// Fails the test unless `tool` (ffmpeg, ffprobe) runs.
fn have(tool: &str) {
    require::program(tool, "-version", "apt-get install ffmpeg");
}

/// The video's length computed from the rows: the think windows (request to reply plus 2 s),
/// merged, at the think speed, the rest at the speed; from `from` to `to` (default the end).
fn expected_duration_s(run: &Path, speed: f64, think_speed: f64, range: Option<(f64, f64)>) -> f64 {
    let text = std::fs::read_to_string(run.join("run.jsonl")).unwrap();
    let rows: Vec<Row> = text.lines().map(|l| Row::decode(l).unwrap()).collect();
    let (from, end) = range.unwrap_or((0.0, rows.last().unwrap().t()));
    let mut w: Vec<(f64, f64)> = Vec::new();
    let mut sent = std::collections::BTreeMap::new();
    for r in &rows {
        match r {
            Row::ModelSend(s) => {
                sent.insert(s.call, s.t);
            }
            Row::ModelReply(m) => w.push((sent[&m.call], sent[&m.call] + m.latency_s + 2.0)),
            _ => {}
        }
    }
    let mut think = 0.0;
    let mut covered_to = f64::NEG_INFINITY;
    for (a, b) in w {
        let (a, b) = (a.max(covered_to).max(from), b.min(end));
        if b > a {
            think += b - a;
            covered_to = b;
        }
    }
    (end - from - think) / speed + think / think_speed
}

/// The pixels of `rgb` in a pixmap, give or take the blending of anti-aliased edges (30 a
/// channel).
fn count_rgb(pix: &tiny_skia::Pixmap, rgb: [u8; 3]) -> usize {
    let near = |p: &[u8]| p.iter().zip(rgb).all(|(a, b)| a.abs_diff(b) <= 30);
    pix.data().chunks_exact(4).filter(|p| near(&p[..3])).count()
}

/// The picture code's colours of LiDAR returns and objects (`picture::canvas::palette`).
const RETURNS_RGB: [u8; 3] = [205, 0, 205];
const OBJECT_RGB: [u8; 3] = [105, 35, 165];

fn loaded(run: &Path, world: WorldChoice) -> Result<Loaded, String> {
    load(run, &root().join("scenarios/maps"), world, &Cache::default())
}

#[test]
fn the_world_of_a_recorded_run_draws_its_objects_and_lidar_returns_and_bag_needs_a_recording() {
    let tmp = TempDir::new("episode-world");
    let runs = tmp.0.join("runs");
    let run = make_run(&runs, "scenarios/t2_06_truck_on_the_lane.json");
    let l = loaded(&run, WorldChoice::Bag).unwrap();
    let w = &l.world;
    assert_eq!(w.source, "run.jsonl + episode.mcap");
    assert!(w.missing.is_empty(), "{:?}", w.missing);
    // The objects each second (an empty set too), the truck once it is placed.
    assert!(w.objects.len() as f64 >= l.timeline.t_end_s - 1.0, "{} sets of objects", w.objects.len());
    let with_truck = w.objects.iter().find(|o| o.objects.iter().any(|b| b.kind == "truck")).expect("a truck");
    let truck = with_truck.objects.iter().find(|b| b.kind == "truck").unwrap().clone();
    let near = |p: &[f64; 2]| (p[0] - truck.at[0]).hypot(p[1] - truck.at[1]) <= truck.length_m / 2.0 + 0.5;
    let seen = w.returns.iter().find(|r| r.points.iter().any(near)).expect("returns on the truck");
    // Its picture (chase view, the video's world) has magenta returns and the purple object.
    let scene = w.scene_at(&l.map, &l.timeline, seen.t_s, WorldView::Chase);
    assert!(!scene.objects.is_empty() && !scene.returns.is_empty());
    // The picture code draws the objects (half transparent) over the returns, which lie on
    // them: each is counted on a picture of its own.
    let (mut only_returns, mut only_objects) = (scene.clone(), scene.clone());
    only_returns.objects.clear();
    only_objects.returns.clear();
    let returns_px = count_rgb(acres_harness::tools::picture::draw(&only_returns).pixmap(), RETURNS_RGB);
    let objects_px = count_rgb(acres_harness::tools::picture::draw(&only_objects).pixmap(), OBJECT_RGB);
    // The run log alone draws neither (only the legend's samples have these colours).
    let plain = loaded(&run, WorldChoice::None).unwrap();
    let bare = acres_harness::tools::picture::draw(&plain.world.scene_at(
        &l.map,
        &l.timeline,
        seen.t_s,
        WorldView::Chase,
    ));
    let (returns_0, objects_0) =
        (count_rgb(bare.pixmap(), RETURNS_RGB), count_rgb(bare.pixmap(), OBJECT_RGB));
    assert!(returns_px > returns_0 + 10, "returns drawn: {returns_px} pixels against {returns_0}");
    assert!(objects_px > objects_0 + 20, "the object drawn: {objects_px} pixels against {objects_0}");

    // The viewer's API gives them to the page.
    let name = run.file_name().unwrap().to_string_lossy().to_string();
    let (_g, addr) = start_view(&[runs.to_str().unwrap(), "--world", "bag"]);
    let (s, body) = raw(&addr, &format!("/api/run?run={name}"));
    assert_eq!(s, 200);
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["world"]["source"], "run.jsonl + episode.mcap");
    assert_eq!(v["world"]["objects"].as_array().unwrap().len(), w.objects.len());
    assert_eq!(v["world"]["returns"].as_array().unwrap().len(), w.returns.len());

    // A folder without a recording: bag refuses it (view, video, the API), auto says so.
    let bare = runs.join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::copy(run.join("run.jsonl"), bare.join("run.jsonl")).unwrap();
    let o = harness().args(["view", "--world", "bag"]).arg(&bare).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no episode.mcap"), "{o:?}");
    let o = harness()
        .arg("video")
        .arg(&bare)
        .args(["--world", "bag", "--out"])
        .arg(tmp.0.join("never.mp4"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no episode.mcap"), "{o:?}");
    let (s, body) = raw(&addr, "/api/run?run=bare");
    assert_eq!(s, 409);
    assert!(String::from_utf8_lossy(&body).contains("has no episode.mcap"));
    let auto = loaded(&bare, WorldChoice::Auto).unwrap();
    assert_eq!(auto.world.source, "run.jsonl");
    assert!(auto.world.objects.is_empty() && auto.world.missing[0].contains("no episode.mcap"));
}

#[test]
fn the_video_frames_timeline_spans_from_to_to() {
    let tmp = TempDir::new("timeline");
    let run = make_run(&tmp.0.join("runs"), "scenarios/t1_01_one_field.json");
    let l = loaded(&run, WorldChoice::Auto).unwrap();
    let end = l.timeline.t_end_s;
    let (from, to) = (end * 0.25, end * 0.75);
    let (left, right) = (TIMELINE_LEFT_PX, WIDTH_PX as f32 - TIMELINE_RIGHT_PX);
    let mut part = Drawer::new(&l, WorldView::Chase, true).range(from, to);
    let mut whole = Drawer::new(&l, WorldView::Chase, true);
    let x = |d: &mut Drawer, t: f64| cursor_x(&d.frame(t, 12.0, false).0).expect("a cursor") as f32;
    for (t, want) in [(from, left), ((from + to) / 2.0, (left + right) / 2.0), (to, right)] {
        let got = x(&mut part, t);
        assert!((got - want).abs() <= 2.0, "t {t:.1} s: cursor at {got} px, expected {want} px");
    }
    // The whole run's timeline puts the same time a quarter of the way along.
    let got = x(&mut whole, from);
    let want = left + (right - left) * 0.25;
    assert!((got - want).abs() <= 2.0, "whole run: cursor at {got} px, expected {want} px");
}

#[test]
fn run_with_view_prints_the_url_first_and_serves_the_runs_as_they_come() {
    let tmp = TempDir::new("runview");
    let out = tmp.0.join("runs");
    let mut child = harness()
        .args(["run", "--scenario", "scenarios/t1_01_one_field.json", "--view", "--no-game", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let _guard = Guard(child);
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let addr = line.trim().trim_start_matches("http://").trim_end_matches('/').to_string();
    assert!(addr.starts_with("127.0.0.1:"), "the URL is the first line: {line:?}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (s, body) = raw(&addr, "/api/index");
        assert_eq!(s, 200);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["follow"], true);
        if v["runs"][0]["score"]["end"] == "done" {
            assert_eq!(v["runs"][0]["scenario"], "t1_01_one_field");
            break;
        }
        assert!(Instant::now() < deadline, "the run never showed as done: {v}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    #[test]
    #[ignore = "needs ffmpeg and ffprobe: run by tools/test.sh"]
    fn video_of_a_shipped_run_has_the_size_fps_duration_and_place_error_asked() {
        have("ffmpeg");
        have("ffprobe");
        let tmp = TempDir::new("video");
        let run = make_run(&tmp.0.join("runs"), "scenarios/t1_01_one_field.json");
        let out = tmp.0.join("one.mp4");
        let fps = 10.0;
        let o = harness()
            .arg("video")
            .arg(&run)
            .arg("--out")
            .arg(&out)
            .args(["--fps", "10", "--workers", "2"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let probe = Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", "v:0", "-count_frames", "-of", "json"])
            .args(["-show_entries", "stream=width,height,r_frame_rate,nb_read_frames:format=duration"])
            .arg(&out)
            .output()
            .unwrap();
        let p: serde_json::Value = serde_json::from_slice(&probe.stdout).unwrap();
        let st = &p["streams"][0];
        assert_eq!((st["width"].as_u64(), st["height"].as_u64()), (Some(1920), Some(1080)));
        assert_eq!(st["r_frame_rate"], "10/1");
        let expected_s = expected_duration_s(&run, 12.0, 1.0, None);
        let frames: f64 = st["nb_read_frames"].as_str().unwrap().parse().unwrap();
        assert_eq!(frames, (expected_s * fps - 1e-9).ceil(), "frames for {expected_s:.3} s at {fps} fps");
        let duration_s: f64 = p["format"]["duration"].as_str().unwrap().parse().unwrap();
        assert!(
            (duration_s - expected_s).abs() <= 1.0 / fps + 0.02,
            "ffprobe {duration_s} s, expected {expected_s:.3} s"
        );
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(tmp.0.join("one.json")).unwrap()).unwrap();
        assert_eq!(report["frames"].as_f64(), Some(frames));
        let place = &report["place_error"];
        assert!(
            place["samples"].as_f64().unwrap() >= frames * 0.9,
            "the vehicle is found in the frames: {place}"
        );
        let vehicle_length_m = 5.0;
        assert!(place["max_m"].as_f64().unwrap() < vehicle_length_m, "{place}");
        let o = harness()
            .arg("video")
            .arg(&run)
            .args(["--out", "/tmp/never.mp4", "--world", "game"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains("no packaged game"));

        // --from/--to: the length of that part of the clock.
        let part = tmp.0.join("part.mp4");
        let o = harness()
            .arg("video")
            .arg(&run)
            .arg("--out")
            .arg(&part)
            .args(["--fps", "5", "--from", "20", "--to", "80", "--world", "bag"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(tmp.0.join("part.json")).unwrap()).unwrap();
        let expected_s = expected_duration_s(&run, 12.0, 1.0, Some((20.0, 80.0)));
        assert_eq!(report["frames"].as_f64(), Some((expected_s * 5.0 - 1e-9).ceil()), "{report}");
        assert_eq!((report["from_s"].as_f64(), report["to_s"].as_f64()), (Some(20.0), Some(80.0)));
        assert_eq!(report["world"], "bag");
        assert!(report["place_error"]["max_m"].as_f64().unwrap() < vehicle_length_m);
    }

    #[test]
    #[ignore = "needs ffmpeg and ffprobe: run by tools/test.sh"]
    fn the_encoder_probe_encodes_a_real_clip_and_rejects_an_encoder_that_cannot_run() {
        use acres_harness::review::video::encode::{choose, works, Encoder, CHAIN};
        have("ffmpeg");
        let tmp = TempDir::new("probe");
        let mpeg4 = CHAIN.iter().find(|e| e.name == "mpeg4").unwrap();
        assert!(works(mpeg4, &tmp.0), "mpeg4 is in every ffmpeg build");
        assert!(!works(&Encoder { name: "no_such_encoder", args: &[] }, &tmp.0));
        let (chosen, skipped) = choose(&tmp.0).expect("some encoder of the chain works");
        assert!(works(&chosen, &tmp.0));
        let at = CHAIN.iter().position(|e| e.name == chosen.name).unwrap();
        assert_eq!(skipped, CHAIN[..at].iter().map(|e| e.name).collect::<Vec<_>>());
    }
}
