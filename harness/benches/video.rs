//! The video's speed on the longest shipped scenario's run: frames drawn per second on one
//! thread (drawing only, in process), and frames drawn and encoded per second end to end
//! (`acres-harness video --workers 2`, as a user runs it, with the encoder the chain picks).
//! Prints the figures and their ratio to real time at 30 fps; nothing is asserted.
//!
//! ```text
//! cargo bench -p acres-harness --bench video
//! ```

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use acres_harness::review::episode::Cache;
use acres_harness::review::loaded::load;
use acres_harness::review::source::WorldView;
use acres_harness::review::video::draw::Drawer;
use acres_harness::review::video::WorldChoice;

/// The shipped scenario with the longest mission (t1_05 ends near 1075 s).
const LONGEST: &str = "scenarios/t1_05_instruction_with_an_order.json";

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let exe = env!("CARGO_BIN_EXE_acres-harness");
    let tmp = std::env::temp_dir().join(format!("acres-bench-video-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let o = Command::new(exe)
        .args(["run", "--scenario", LONGEST, "--quiet", "--out"])
        .arg(tmp.join("runs"))
        .current_dir(&root)
        .output()
        .expect("the harness runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = std::fs::read_dir(tmp.join("runs")).unwrap().flatten().next().unwrap().path();

    // Drawing only, one thread (the world with the recording's objects and returns).
    let t0 = Instant::now();
    let loaded = load(&run, &root.join("scenarios/maps"), WorldChoice::Auto, &Cache::default())
        .expect("the run loads");
    println!(
        "video: loading the run with its episode.mcap: {:.2} s ({} sets of objects, {} scans of returns)",
        t0.elapsed().as_secs_f64(),
        loaded.world.objects.len(),
        loaded.world.returns.len()
    );
    let end_s = loaded.timeline.t_end_s;
    let mut d = Drawer::new(&loaded, WorldView::Chase, true);
    let n = 120;
    let t0 = Instant::now();
    for i in 0..n {
        let (pix, _) = d.frame(end_s * i as f64 / n as f64, 12.0, false);
        std::hint::black_box(pix);
    }
    let draw_fps = n as f64 / t0.elapsed().as_secs_f64();
    println!("video: drawing only, 1 thread: {draw_fps:.1} frames/s (1920x1080)");

    // End to end with 2 workers, the default fps.
    let out = tmp.join("longest.mp4");
    let t0 = Instant::now();
    let o = Command::new(exe)
        .arg("video")
        .arg(&run)
        .arg("--out")
        .arg(&out)
        .args(["--workers", "2"])
        .current_dir(&root)
        .output()
        .expect("video runs");
    let wall_s = t0.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.join("longest.json")).unwrap()).unwrap();
    let frames = report["frames"].as_f64().unwrap();
    let fps = frames / wall_s;
    println!(
        "video: {} ({:.0} s mission), {frames} frames at 30 fps = {:.1} s of video, encoder {}",
        LONGEST,
        end_s,
        report["duration_s"].as_f64().unwrap(),
        report["encoder"].as_str().unwrap()
    );
    println!(
        "video: drawing + encoding, --workers 2 on {} cores: {fps:.1} frames/s over {wall_s:.1} s wall ({:.2}x real time at 30 fps)",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        fps / 30.0
    );
    println!(
        "video: place error max {:.3} m, mean {:.3} m over {} frames",
        report["place_error"]["max_m"].as_f64().unwrap(),
        report["place_error"]["mean_m"].as_f64().unwrap(),
        report["place_error"]["samples"]
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
