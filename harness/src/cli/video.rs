//! `acres-harness video RUN --out FILE.mp4`: an MP4 of 1920 × 1080 with the viewer's parts in
//! step, and its report `FILE.json`.
//!
//! ```text
//! acres-harness video runs/a/t2_06_truck_on_the_lane__checked__scripted --out truck.mp4
//! acres-harness video RUN --out part.mp4 --from 60 --to 240 --view field --fps 25 --workers 2
//! ```

use std::path::PathBuf;

use clap::Args;

use super::Failure;
use crate::review::source::WorldView;
use crate::review::video::{self, VideoError, VideoOptions, WorldChoice};

/// Options of `video`.
#[derive(Debug, Clone, Args)]
pub struct VideoArgs {
    /// The run folder.
    pub folder: PathBuf,
    /// The MP4 file (the report is the same name with .json).
    #[arg(long)]
    pub out: PathBuf,
    /// Mission seconds per video second between the model calls.
    #[arg(long, default_value_t = 12.0)]
    pub speed: f64,
    /// Mission seconds per video second during a model call and 2 s after its reply.
    #[arg(long, default_value_t = 1.0)]
    pub think_speed: f64,
    /// The first mission time, s.
    #[arg(long)]
    pub from: Option<f64>,
    /// The last mission time, s.
    #[arg(long)]
    pub to: Option<f64>,
    /// The world: auto, bag (the recording), none; game is not available.
    #[arg(long, value_enum, default_value_t = WorldChoice::Auto)]
    pub world: WorldChoice,
    /// The world's view: chase (around the vehicle), field (the skill's field), drive (the map).
    #[arg(long, value_enum, default_value_t = WorldView::Chase)]
    pub view: WorldView,
    /// Frames per second.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f64,
    /// Threads that draw frames.
    #[arg(long, default_value_t = 3)]
    pub workers: usize,
    /// Keep the work folder (<out>.work/: the video clock and the ffmpeg log).
    #[arg(long)]
    pub keep_work: bool,
    /// The maps folder of the scenario (default: beside the run's scenario file).
    #[arg(long)]
    pub maps: Option<PathBuf>,
}

/// Runs the command.
pub fn run(a: VideoArgs) -> Result<(), Failure> {
    if !a.folder.join(crate::runfolder::RUN_FILE).is_file() {
        return Err(Failure::input(format!("{}: not a run folder (no run.jsonl)", a.folder.display())));
    }
    let maps = a.maps.clone().unwrap_or_else(|| super::view::maps_for(&a.folder));
    let o = VideoOptions {
        folder: a.folder,
        out: a.out,
        speed: a.speed,
        think_speed: a.think_speed,
        from_s: a.from,
        to_s: a.to,
        world: a.world,
        view: a.view,
        fps: a.fps,
        workers: a.workers,
        keep_work: a.keep_work,
        maps,
    };
    match video::make(&o) {
        Ok(r) => {
            println!(
                "{}: {} frames at {} fps ({:.1} s), encoder {}, place error max {:.2} m mean {:.2} m, {:.1} frames/s; report {}",
                r.file,
                r.frames,
                r.fps,
                r.duration_s,
                r.encoder,
                r.place_error.max_m,
                r.place_error.mean_m,
                r.frames_per_wall_s,
                video::report_file(&o.out).display()
            );
            Ok(())
        }
        Err(VideoError::Input(m)) => Err(Failure::input(format!("video: {m}"))),
        Err(VideoError::Encode(m)) => Err(Failure::check(format!("video: {m}"))),
    }
}
