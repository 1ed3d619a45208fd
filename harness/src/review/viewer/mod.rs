//! The viewer: a local web page on 127.0.0.1 that shows one run folder, or a folder of them
//! (opening on the score table to pick a run from).
//!
//! ```text
//! acres-harness view runs/a                 # a folder of runs: the table of runs first
//! acres-harness view runs/a/t1_01_one_field__checked__scripted --follow --port 8080
//! ```
//!
//! The server (`http`) reads only the served folder, and the page loads nothing from a
//! network: its HTML, script and style are embedded in the binary (`assets/`). Routes:
//!
//! | Route | Answer |
//! | --- | --- |
//! | `/`, `/app.js`, `/style.css` | The page |
//! | `/api/index` | `{root, single, follow, world, runs: [ScoreLine]}` (`single`: the root is a run) |
//! | `/api/board?a=KEY&b=KEY` | A sweep folder's leaderboard: `{sweep, groups, keys, scenarios, matrix, chart_svg, comparison}` ([`board`]) |
//! | `/api/run?run=REL` | `{head, timeline, world, verdict_places}` of the run folder `REL` (`.` for the root); `world` has the objects and LiDAR returns of the run's `episode.mcap` (409 with `--world bag` for a run without one) |
//! | `/api/verdict.png?run=REL&i=N` | The picture of verdict `N`, its place in red (a refusal) |
//! | `/files/REL/...` | A file of the served folder (the frames) |
//!
//! The World pane is drawn in the browser on a canvas from the JSON of [`WorldData`](crate::review::source::WorldData)
//! (the map, the track, plans, routes, blocked places, and from the episode recording the
//! objects and LiDAR returns):
//! the map and the track come once, and scrubbing redraws at the screen's rate with no request.
//! The verdict pictures are drawn by the server with the picture code (the planner's own view).
//!
//! # Layout
//!
//! - The parts it shares with the video are in [`crate::review`]: the decoded rows and the
//!   timeline, the World pane's data, the episode recording's objects and returns, a loaded run.
//! - [`api`]: the answers of the routes.
//! - [`board`]: the leaderboard of a sweep folder (the folder page's board).
//! - [`http`]: the minimal HTTP server and [`http::safe_path`].

pub mod api;
pub mod board;
pub mod http;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::review::video::WorldChoice;

/// The page.
pub const INDEX_HTML: &str = include_str!("assets/index.html");
/// The page's script.
pub const APP_JS: &str = include_str!("assets/app.js");
/// The page's style.
pub const STYLE_CSS: &str = include_str!("assets/style.css");

/// What the viewer serves.
#[derive(Debug, Clone)]
pub struct Viewer {
    /// The served folder, canonical.
    pub root: PathBuf,
    /// The maps folder for the scenarios of the runs.
    pub maps: PathBuf,
    /// Whether the page follows a run in progress (polls for new rows).
    pub follow: bool,
    /// Where the World pane's world comes from (`none`: no World picture; `bag`: the episode
    /// recording, which each run must have; `auto`: the recording when there is one).
    pub world: WorldChoice,
    /// The episode recordings read so far.
    pub episodes: Arc<crate::review::episode::Cache>,
}

impl Viewer {
    /// A viewer of `folder` (a run folder or a folder of them).
    pub fn new(folder: &Path, maps: PathBuf, follow: bool, world: WorldChoice) -> std::io::Result<Viewer> {
        Ok(Viewer { root: folder.canonicalize()?, maps, follow, world, episodes: Arc::default() })
    }

    /// Answers one request.
    pub fn handle(&self, req: &http::Request) -> http::Response {
        use http::Response;
        match req.path.as_str() {
            "/" | "/index.html" => Response::ok("text/html; charset=utf-8", INDEX_HTML),
            "/app.js" => Response::ok("text/javascript; charset=utf-8", APP_JS),
            "/style.css" => Response::ok("text/css; charset=utf-8", STYLE_CSS),
            "/api/index" => api::index(self),
            "/api/board" => board::board(self, req),
            "/api/run" => api::run(self, req),
            "/api/verdict.png" => api::verdict_png(self, req),
            p => match p.strip_prefix("/files/") {
                Some(rel) => api::file(self, rel),
                None => Response::error(404, format!("not found: {p}")),
            },
        }
    }
}

/// Binds 127.0.0.1:`port` (0: a free port), then serves the viewer on a background thread.
/// Returns the address.
pub fn start(viewer: Viewer, port: u16) -> std::io::Result<SocketAddr> {
    let (listener, addr): (TcpListener, SocketAddr) = http::bind(port)?;
    let v = Arc::new(viewer);
    let handler = Arc::new(move |r: &http::Request| v.handle(r));
    std::thread::Builder::new().name("viewer".into()).spawn(move || http::serve(listener, handler))?;
    Ok(addr)
}
