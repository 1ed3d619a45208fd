//! `acres-harness view FOLDER`: serves the viewer of a run folder, or of a folder of run folders
//! (the page opens on the table of runs), on 127.0.0.1. The first line of stdout is the URL.
//!
//! ```text
//! acres-harness view runs/a
//! acres-harness view runs/a/t1_01_one_field__checked__scripted --follow --port 8080
//! ```

use std::path::{Path, PathBuf};

use clap::Args;

use super::{maps_dir, Failure};
use crate::review::video::WorldChoice;
use crate::review::viewer::{self, Viewer};

/// Options of `view`.
#[derive(Debug, Clone, Args)]
pub struct ViewArgs {
    /// A run folder, or a folder of run folders.
    pub folder: PathBuf,
    /// The port on 127.0.0.1 (default: a free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Follow a run in progress: the page polls for new rows.
    #[arg(long)]
    pub follow: bool,
    /// The maps folder of the scenarios (default: `maps/` beside the run's scenario file, else
    /// `scenarios/maps`).
    #[arg(long)]
    pub maps: Option<PathBuf>,
    /// The World pane's world: auto or bag (drawn from the recording), none (no World picture);
    /// there is no packaged game: `game` is refused.
    #[arg(long, value_enum, default_value_t = WorldChoice::Auto)]
    pub world: WorldChoice,
}

/// The maps folder for the runs in or below `folder`, from the scenario file of the first run.
pub fn maps_for(folder: &Path) -> PathBuf {
    let scenario_file = crate::runfolder::load_scores(folder).first().and_then(|line| {
        let run = folder.join(&line.folder).join(crate::runfolder::RUN_FILE);
        let run = if folder.join(crate::runfolder::RUN_FILE).is_file() {
            folder.join(crate::runfolder::RUN_FILE)
        } else {
            run
        };
        let text = std::fs::read_to_string(run).ok()?;
        match crate::runfolder::Row::decode(text.lines().next()?).ok()? {
            crate::runfolder::Row::Run(r) => Some(PathBuf::from(r.scenario_file)),
            _ => None,
        }
    });
    maps_dir(&scenario_file.into_iter().collect::<Vec<_>>())
}

/// Refuses the game, which is not packaged here.
pub fn refuse_game(world: WorldChoice) -> Result<(), Failure> {
    if world == WorldChoice::Game {
        return Err(Failure::input(
            "--world game: no packaged game is available in this build; the world is drawn from the recording (use auto, bag or none)",
        ));
    }
    Ok(())
}

/// Starts a viewer of `folder` in the background and prints its URL as a line of stdout.
pub fn start(
    folder: &Path,
    port: u16,
    follow: bool,
    maps: Option<PathBuf>,
    world: WorldChoice,
) -> Result<String, Failure> {
    if !folder.is_dir() {
        return Err(Failure::input(format!("{}: no such folder", folder.display())));
    }
    let maps = maps.unwrap_or_else(|| maps_for(folder));
    if world == WorldChoice::Bag
        && !follow
        && folder.join(crate::runfolder::RUN_FILE).is_file()
        && crate::review::episode::episode_file(folder).is_none()
    {
        return Err(Failure::input(crate::review::loaded::no_recording(folder)));
    }
    let v = Viewer::new(folder, maps, follow, world)
        .map_err(|e| Failure::input(format!("{}: {e}", folder.display())))?;
    let addr =
        viewer::start(v, port).map_err(|e| Failure::env(format!("cannot serve on 127.0.0.1:{port}: {e}")))?;
    let url = format!("http://{addr}/");
    println!("{url}");
    Ok(url)
}

/// Runs the command: serves until the process is stopped.
pub fn run(a: ViewArgs) -> Result<(), Failure> {
    refuse_game(a.world)?;
    if !a.follow && crate::runfolder::load_scores(&a.folder).is_empty() && a.folder.is_dir() {
        return Err(Failure::input(format!(
            "{}: no run folder (run.jsonl) in or below it; --follow waits for one",
            a.folder.display()
        )));
    }
    start(&a.folder, a.port, a.follow, a.maps, a.world)?;
    eprintln!("viewer of {} (Ctrl-C to stop)", a.folder.display());
    park()
}

/// Waits until the process is stopped.
pub fn park() -> ! {
    loop {
        std::thread::park();
    }
}
