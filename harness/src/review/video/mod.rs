//! The video of a run folder: an MP4 of 1920 × 1080 with the viewer's parts in step.
//!
//! ```text
//! acres-harness video runs/a/t2_06_truck_on_the_lane__checked__scripted --out truck.mp4
//! ```
//!
//! Frames are drawn in Rust ([`draw`]) by `workers` threads, each frame at the mission time of
//! the video clock ([`timing`]), and piped in order as raw RGBA to the system's `ffmpeg`
//! ([`encode`]: h264_nvenc → libx264 → libopenh264 → mpeg4, each probed by encoding a tiny clip).
//! The report `<out>.json` (the output with the extension `.json`) gives the frames, the
//! duration, the encoder and the place error between the drawn vehicle (found again in each
//! frame's pixels) and the pose track (max/mean, m).
//!
//! # Layout
//!
//! - [`timing`]: the video clock (speed, think speed, from/to).
//! - [`draw`]: one frame.
//! - [`encode`]: the encoder chain and the pipe to ffmpeg.

pub mod draw;
pub mod encode;
pub mod timing;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::review::loaded::{load, Loaded};
use crate::review::source::WorldView;
pub use crate::review::WorldChoice;
use timing::{think_windows, TimeMap};

/// The options of one video.
#[derive(Debug, Clone)]
pub struct VideoOptions {
    /// The run folder.
    pub folder: PathBuf,
    /// The MP4 file.
    pub out: PathBuf,
    /// Mission seconds per video second between the model calls.
    pub speed: f64,
    /// Mission seconds per video second during a model call and 2 s after its reply.
    pub think_speed: f64,
    /// The first mission time, s (default 0).
    pub from_s: Option<f64>,
    /// The last mission time, s (default the end).
    pub to_s: Option<f64>,
    /// The world.
    pub world: WorldChoice,
    /// The world's view.
    pub view: WorldView,
    /// Frames per second.
    pub fps: f64,
    /// Drawing threads.
    pub workers: usize,
    /// Keep the work folder (`<out>.work/`: the clock, the ffmpeg log).
    pub keep_work: bool,
    /// The maps folder.
    pub maps: PathBuf,
}

/// A video that cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum VideoError {
    /// Bad input (exit 2).
    #[error("{0}")]
    Input(String),
    /// ffmpeg failed (exit 1).
    #[error("{0}")]
    Encode(String),
}

/// The place error between the drawn vehicle and the pose track.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PlaceError {
    /// The largest, m.
    pub max_m: f64,
    /// The mean, m.
    pub mean_m: f64,
    /// The frames measured (the vehicle wholly in the picture).
    pub samples: usize,
}

/// The report `<out>.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The MP4 file.
    pub file: String,
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
    /// Frames.
    pub frames: usize,
    /// Frames per second.
    pub fps: f64,
    /// The video's length, s (`frames / fps`).
    pub duration_s: f64,
    /// The length of the video clock, s (before rounding up to whole frames).
    pub clock_s: f64,
    /// The encoder used.
    pub encoder: String,
    /// The encoders of the chain tried before it (not listed or failed the probe).
    pub encoders_skipped: Vec<String>,
    /// The speeds.
    pub speed: f64,
    /// The think speed.
    pub think_speed: f64,
    /// The mission times shown, s.
    pub from_s: f64,
    /// The last mission time shown, s.
    pub to_s: f64,
    /// The world.
    pub world: WorldChoice,
    /// The view.
    pub view: WorldView,
    /// Drawing threads.
    pub workers: usize,
    /// Wall time of drawing and encoding, s.
    pub wall_s: f64,
    /// Frames drawn and encoded per wall second.
    pub frames_per_wall_s: f64,
    /// The place error of the drawn vehicle.
    pub place_error: PlaceError,
    /// The video clock's segments (mission time, rate, thinking).
    pub segments: Vec<(f64, f64, f64, bool)>,
}

/// The report's file for an output file: the same name with the extension `.json`.
pub fn report_file(out: &Path) -> PathBuf {
    out.with_extension("json")
}

fn check(o: &VideoOptions) -> Result<(), VideoError> {
    let bad = |m: String| Err(VideoError::Input(m));
    if o.world == WorldChoice::Game {
        return bad("--world game: no packaged game is available in this build; use auto, bag or none".into());
    }
    for (name, v) in [("--speed", o.speed), ("--think-speed", o.think_speed), ("--fps", o.fps)] {
        if !(v.is_finite() && v > 0.0) {
            return bad(format!("{name} must be a number > 0, found {v}"));
        }
    }
    if o.workers == 0 {
        return bad("--workers must be at least 1".into());
    }
    if o.out.extension().is_some_and(|e| e == "json") {
        return bad(format!(
            "--out {}: the report takes the name with .json; give the video another extension",
            o.out.display()
        ));
    }
    Ok(())
}

/// The video clock of a run for the options; an error for a bad `--from`/`--to`.
pub fn clock(run: &Loaded, o: &VideoOptions) -> Result<(f64, f64, TimeMap), VideoError> {
    let end = run.timeline.t_end_s;
    let from = o.from_s.unwrap_or(0.0);
    let to = o.to_s.unwrap_or(end).min(end);
    if !(from.is_finite() && to.is_finite() && from >= 0.0 && to > from) {
        return Err(VideoError::Input(format!(
            "--from {from} --to {to}: need 0 <= from < to, within the run (0 to {end:.1} s)"
        )));
    }
    Ok((from, to, TimeMap::new(from, to, &think_windows(&run.timeline), o.speed, o.think_speed)))
}

/// Makes the video and writes its report.
pub fn make(o: &VideoOptions) -> Result<Report, VideoError> {
    check(o)?;
    let cache = crate::review::episode::Cache::default();
    let run = load(&o.folder, &o.maps, o.world, &cache).map_err(VideoError::Input)?;
    let (from_s, to_s, map) = clock(&run, o)?;
    encode::ffmpeg_version().ok_or_else(|| {
        VideoError::Input("ffmpeg is not installed or does not run (Debian: apt-get install ffmpeg)".into())
    })?;
    let work = o.out.with_extension("work");
    std::fs::create_dir_all(&work).map_err(|e| VideoError::Input(format!("{}: {e}", work.display())))?;
    let (enc, skipped) = encode::choose(&work)
        .ok_or_else(|| VideoError::Encode("no encoder of the chain works with this ffmpeg".into()))?;
    let frames = map.frames(o.fps);
    let segments: Vec<(f64, f64, f64, bool)> =
        map.segments.iter().map(|s| (s.t0_s, s.t1_s, s.rate, s.thinking)).collect();
    let _ = std::fs::write(work.join("clock.json"), serde_json::to_vec_pretty(&segments).unwrap_or_default());
    let started = Instant::now();
    let place = render_all(&run, o, (from_s, to_s), &map, frames, &enc, &work)?;
    let wall_s = started.elapsed().as_secs_f64();
    if !o.keep_work {
        let _ = std::fs::remove_dir_all(&work);
    }
    let report = Report {
        file: o.out.display().to_string(),
        width: draw::WIDTH_PX,
        height: draw::HEIGHT_PX,
        frames,
        fps: o.fps,
        duration_s: frames as f64 / o.fps,
        clock_s: map.duration_s,
        encoder: enc.name.into(),
        encoders_skipped: skipped.iter().map(|s| s.to_string()).collect(),
        speed: o.speed,
        think_speed: o.think_speed,
        from_s,
        to_s,
        world: o.world,
        view: o.view,
        workers: o.workers,
        wall_s,
        frames_per_wall_s: frames as f64 / wall_s.max(1e-9),
        place_error: place,
        segments,
    };
    let file = report_file(&o.out);
    std::fs::write(&file, serde_json::to_vec_pretty(&report).unwrap_or_default())
        .map_err(|e| VideoError::Encode(format!("{}: {e}", file.display())))?;
    Ok(report)
}

/// One drawn frame on its way to ffmpeg.
type Drawn = (usize, Vec<u8>, Option<draw::PlaceSample>);

/// Draws every frame in `workers` threads and writes them in order to ffmpeg.
fn render_all(
    run: &Loaded,
    o: &VideoOptions,
    (from_s, to_s): (f64, f64),
    map: &TimeMap,
    frames: usize,
    enc: &encode::Encoder,
    work: &Path,
) -> Result<PlaceError, VideoError> {
    let log = std::fs::File::create(work.join("ffmpeg.log")).map_or(std::process::Stdio::null(), Into::into);
    let mut pipe = encode::Pipe::start(enc, &o.out, o.fps, draw::WIDTH_PX, draw::HEIGHT_PX, log)
        .map_err(|e| VideoError::Encode(format!("cannot start ffmpeg: {e}")))?;
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::sync_channel::<Drawn>(o.workers * 2);
    let bar = Progress { on: std::io::stderr().is_terminal(), total: frames, started: Instant::now() };
    let mut place = PlaceError::default();
    let mut sum_m = 0.0;
    let result = std::thread::scope(|s| {
        for _ in 0..o.workers {
            let (tx, next) = (tx.clone(), &next);
            s.spawn(move || {
                let mut d = draw::Drawer::new(run, o.view, o.world != WorldChoice::None).range(from_s, to_s);
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= frames {
                        break;
                    }
                    let v_s = i as f64 / o.fps;
                    let (t_s, thinking) = map.at(v_s);
                    let rate = if thinking { o.think_speed } else { o.speed };
                    let (pix, sample) = d.frame(t_s, rate, thinking);
                    if tx.send((i, pix.take(), sample)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, Drawn> = BTreeMap::new();
        let mut written = 0;
        for item in rx.iter() {
            waiting.insert(item.0, item);
            while let Some((_, rgba, sample)) = waiting.remove(&written) {
                pipe.write(&rgba)
                    .map_err(|e| VideoError::Encode(format!("ffmpeg stopped taking frames: {e}")))?;
                if let Some(p) = sample {
                    place.samples += 1;
                    place.max_m = place.max_m.max(p.error_m);
                    sum_m += p.error_m;
                }
                written += 1;
                bar.show(written);
            }
        }
        Ok::<(), VideoError>(())
    });
    bar.done();
    result?;
    pipe.finish().map_err(|e| VideoError::Encode(format!("{e} (see {})", work.display())))?;
    place.mean_m = if place.samples > 0 { sum_m / place.samples as f64 } else { 0.0 };
    Ok(place)
}

/// A progress bar on stderr, when stderr is a terminal.
struct Progress {
    on: bool,
    total: usize,
    started: Instant,
}

impl Progress {
    fn show(&self, done: usize) {
        if !self.on || (!done.is_multiple_of(5) && done != self.total) {
            return;
        }
        let width = 40;
        let filled = done * width / self.total.max(1);
        let fps = done as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        let mut e = std::io::stderr().lock();
        let _ = write!(
            e,
            "\r[{}{}] {done}/{} frames {fps:.1} fps",
            "#".repeat(filled),
            ".".repeat(width - filled),
            self.total
        );
        let _ = e.flush();
    }
    fn done(&self) {
        if self.on {
            eprintln!();
        }
    }
}
