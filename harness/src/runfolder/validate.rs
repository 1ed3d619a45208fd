//! Validate: examines a run folder against the contract `acres-harness-run-1`.
//!
//! [`validate_folder`] reads `run.jsonl` line by line and checks:
//!
//! - each line is one JSON object that decodes as a [`Row`] (at most
//!   [`MAX_LINE_BYTES`]); a line cut in the middle is a problem;
//! - the first row is `run` with the schema [`SCHEMA`], and there is only one;
//! - `t` and `wall` never decrease;
//! - `pose` rows at t = 0, 0.5, 1.0, ... with no gap or duplicate (tolerance 1e-6), no jump
//!   longer than 10 m between two poses, and a last pose less than 0.5 s before the end row;
//! - each `frame` row names `frames/<id>.png`, the file exists and is a PNG of 640 x 692, ids
//!   are unique, each file under `frames/` has a frame row, and each frame that a `wake` or a
//!   `model_send` block names has a frame row;
//! - wake-ups are numbered 1, 2, 3, ...; `model_send` and `tool` rows name the current wake-up;
//! - model calls are numbered 1, 2, 3, ...; each `model_send` is answered by exactly one
//!   `model_reply` or `model_error` of the same call before the next `model_send`, wake-up or
//!   the end (`model_retry` rows of that call and any row of the world may come between);
//! - the last row is `end`, no row follows it, its score agrees with it (`end`, `success`), its
//!   `failed` list is the checks that are false, and its digest is hex; in a folder whose run row
//!   says `rows_version` 2, its score is the fold of the rows before it (every key equal:
//!   [`super::score::ScoreFold`]);
//! - `proxy.jsonl` (the metering proxy's calls, when there is one): each line a `proxy_call`
//!   row, call numbers unique, latency and cost finite and >= 0 (see [`super::proxy`]);
//! - in a finished run (an end row), `episode.mcap` and `episode.interface.mcap` are readable
//!   MCAP files with a summary and Statistics, `cdr` channels with `ros2msg` schemas and their
//!   topics (see `recording::check`).
//!
//! A folder whose rows are all valid but which has no end row is
//! `Incomplete("no end row: the run was cut off after line N")`: a run still going, or a killed
//! one. In such a folder, frame files without a row are tolerated (the writer writes the file
//! before its row). Every problem names the file and, where there is one, the line.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::rows::{BlockKind, EndRow, FrameRow, ModelSendRow, PoseRow, Row};
use super::{
    frame_file, is_frame_id, FRAMES_DIR, FRAME_HEIGHT_PX, FRAME_WIDTH_PX, MAX_LINE_BYTES, MAX_POSE_JUMP_M,
    POSE_PERIOD_S, POSE_TOLERANCE_S, RUN_FILE, SCHEMA,
};

/// One thing wrong with a run folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file with the problem (`<folder>/run.jsonl`, or a frame file).
    pub file: PathBuf,
    /// The line of `run.jsonl`, from 1, when the problem has one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// The verdict on one run folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The folder agrees with the contract.
    Ok,
    /// Every row is valid but the end row is missing: the reason says after which line.
    Incomplete(String),
    /// The folder breaks the contract.
    Invalid(Vec<Problem>),
}

/// The report of [`validate_folder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderReport {
    /// The lines read from `run.jsonl`.
    pub rows: usize,
    /// The verdict.
    pub status: Status,
}

impl FolderReport {
    /// Whether the folder agrees with the contract.
    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }

    /// The problems of an invalid folder (empty otherwise).
    pub fn problems(&self) -> &[Problem] {
        match &self.status {
            Status::Invalid(problems) => problems,
            _ => &[],
        }
    }
}

impl fmt::Display for FolderReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.status {
            Status::Ok => write!(f, "ok ({} rows)", self.rows),
            Status::Incomplete(reason) => write!(f, "incomplete: {reason}"),
            Status::Invalid(problems) => {
                write!(f, "invalid: {} problem(s)", problems.len())?;
                problems.iter().try_for_each(|p| write!(f, "\n  {p}"))
            }
        }
    }
}

/// Validates every run folder at or below `path`: the folder itself when it holds `run.jsonl`
/// (or `frames/`), else each such folder below it, in the order of their paths. A path with no
/// run folder gives one invalid report for the path.
pub fn validate_tree(path: &Path) -> Vec<(PathBuf, FolderReport)> {
    let folders = find_run_folders(path);
    if folders.is_empty() {
        let message = if path.is_dir() {
            "no run folder below (a run folder holds run.jsonl)"
        } else {
            "no such folder"
        };
        let problem = Problem { file: path.to_path_buf(), line: None, message: message.into() };
        return vec![(path.to_path_buf(), FolderReport { rows: 0, status: Status::Invalid(vec![problem]) })];
    }
    folders.into_iter().map(|folder| (folder.clone(), validate_folder(&folder))).collect()
}

/// The run folders at or below `path`, sorted: folders holding `run.jsonl`, or `frames/` (a
/// run folder that lost its rows). The search does not go inside a run folder.
pub fn find_run_folders(path: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    collect_run_folders(path, &mut found);
    found
}

fn collect_run_folders(path: &Path, found: &mut Vec<PathBuf>) {
    if path.join(RUN_FILE).is_file() || path.join(FRAMES_DIR).is_dir() {
        found.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = fs::read_dir(path) else { return };
    let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    for dir in dirs {
        collect_run_folders(&dir, found);
    }
}

/// Validates one run folder (see the module docs for the checks).
pub fn validate_folder(path: &Path) -> FolderReport {
    let run_file = path.join(RUN_FILE);
    let bytes = match fs::read(&run_file) {
        Ok(bytes) => bytes,
        Err(e) => {
            let message = format!("cannot read the rows: {e} (a run folder holds {RUN_FILE})");
            let problem = Problem { file: run_file, line: None, message };
            return FolderReport { rows: 0, status: Status::Invalid(vec![problem]) };
        }
    };
    let mut checker = Checker::new(path);
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let lines: Vec<&[u8]> = if body.is_empty() { Vec::new() } else { body.split(|b| *b == b'\n').collect() };
    for (i, raw) in lines.iter().enumerate() {
        let cut = i + 1 == lines.len() && !ends_with_newline;
        checker.line(i + 1, raw, cut);
    }
    checker.finish(lines.len())
}

/// The state of the checks while the rows are read.
struct Checker {
    folder: PathBuf,
    run_file: PathBuf,
    problems: Vec<Problem>,
    /// The last t and wall, with their line.
    last_t: Option<(f64, usize)>,
    last_wall: Option<(f64, usize)>,
    /// The next pose index (t = index * 0.5) and the last pose with its line.
    next_pose: u64,
    last_pose: Option<(PoseRow, usize)>,
    /// Frame rows by id: line and file.
    frames: BTreeMap<String, (usize, String)>,
    /// Frames named by wake and model_send rows: id and line.
    frame_refs: Vec<(String, usize)>,
    /// The open model call and the line of its send; the last call number.
    open_call: Option<(u64, usize)>,
    last_call: u64,
    /// The current wake-up number.
    wake: u64,
    run_line: Option<usize>,
    end_line: Option<usize>,
    /// What the run row says the run records.
    record: crate::runfolder::kinds::Record,
    /// The run row's `rows_version` (1 when absent).
    rows_version: u32,
    /// The score folded from the rows before the end row.
    fold: super::score::ScoreFold,
}

impl Checker {
    fn new(folder: &Path) -> Self {
        Checker {
            folder: folder.to_path_buf(),
            run_file: folder.join(RUN_FILE),
            problems: Vec::new(),
            last_t: None,
            last_wall: None,
            next_pose: 0,
            last_pose: None,
            frames: BTreeMap::new(),
            frame_refs: Vec::new(),
            open_call: None,
            last_call: 0,
            wake: 0,
            run_line: None,
            end_line: None,
            record: crate::runfolder::kinds::Record::All,
            rows_version: 1,
            fold: super::score::ScoreFold::default(),
        }
    }

    fn problem(&mut self, line: usize, message: impl Into<String>) {
        self.problems.push(Problem {
            file: self.run_file.clone(),
            line: Some(line),
            message: message.into(),
        });
    }

    /// Reads one line; `cut` when it is the last line and has no newline.
    fn line(&mut self, n: usize, raw: &[u8], cut: bool) {
        if raw.len() > MAX_LINE_BYTES {
            return self.problem(n, format!("line of {} bytes, above the limit {MAX_LINE_BYTES}", raw.len()));
        }
        let Ok(text) = std::str::from_utf8(raw) else {
            return self.problem(n, "not UTF-8");
        };
        if text.trim().is_empty() {
            return self.problem(n, "empty line");
        }
        match Row::decode(text) {
            Ok(row) => self.row(n, &row),
            Err(e) if cut => self.problem(n, format!("the line is cut off (no newline): {e}")),
            Err(e) => self.problem(n, format!("not a valid row: {e}")),
        }
    }

    fn row(&mut self, n: usize, row: &Row) {
        if let Some(end) = self.end_line {
            self.problem(n, format!("a `{}` row after the end row (line {end})", row.type_name()));
        }
        if n == 1 && !matches!(row, Row::Run(_)) {
            self.problem(n, format!("the first row is `{}`, not `run`", row.type_name()));
        }
        self.clocks(n, row);
        if !matches!(row, Row::End(_)) {
            self.fold.row(row);
        }
        match row {
            Row::Run(run) => {
                if n != 1 {
                    self.problem(n, "a `run` row that is not the first row");
                } else {
                    self.run_line = Some(n);
                    self.record = run.record;
                    self.rows_version = run.rows_version.unwrap_or(1);
                }
                if run.schema != SCHEMA {
                    self.problem(n, format!("schema {:?}, expected {SCHEMA:?}", run.schema));
                }
            }
            Row::Pose(pose) => self.pose(n, pose),
            Row::Wake(wake) => {
                self.no_open_call(n, "wake");
                if wake.n != self.wake + 1 {
                    self.problem(n, format!("wake n={}, expected n={}", wake.n, self.wake + 1));
                }
                self.wake = wake.n;
                if let Some(frame) = &wake.frame {
                    self.frame_refs.push((frame.clone(), n));
                }
            }
            Row::ModelSend(send) => self.model_send(n, send),
            Row::ModelReply(reply) => self.answer(n, "model_reply", reply.call),
            Row::ModelError(error) => self.answer(n, "model_error", error.call),
            Row::ModelRetry(retry) => {
                if self.open_call.map(|(call, _)| call) != Some(retry.call) {
                    let message = format!("model_retry for call {} outside that call", retry.call);
                    self.problem(n, message);
                }
            }
            Row::Tool(tool) => {
                if tool.wake != self.wake {
                    let message =
                        format!("tool of wake {}, but the current wake-up is {}", tool.wake, self.wake);
                    self.problem(n, message);
                }
            }
            Row::Frame(frame) => self.frame(n, frame),
            Row::End(end) => self.end(n, end),
            Row::ModelWait(_)
            | Row::PlanCheck(_)
            | Row::Event(_)
            | Row::Request(_)
            | Row::ReturnsOnRoute(_)
            | Row::Note(_)
            | Row::LinkLost(_)
            | Row::LinkStats(_) => {}
        }
    }

    /// `t` and `wall` never decrease.
    fn clocks(&mut self, n: usize, row: &Row) {
        if row.t() < 0.0 {
            self.problem(n, format!("negative t {}", row.t()));
        }
        for (name, value, is_t) in [("t", row.t(), true), ("wall", row.wall(), false)] {
            let last = if is_t { &mut self.last_t } else { &mut self.last_wall };
            match *last {
                Some((before, line)) if value < before => {
                    let message = format!("{name} goes back from {before} (line {line}) to {value}");
                    self.problems.push(Problem { file: self.run_file.clone(), line: Some(n), message });
                }
                _ => *last = Some((value, n)),
            }
        }
    }

    fn pose(&mut self, n: usize, pose: &PoseRow) {
        let index = (pose.t / POSE_PERIOD_S).round();
        let expected = self.next_pose as f64 * POSE_PERIOD_S;
        if (pose.t - index * POSE_PERIOD_S).abs() > POSE_TOLERANCE_S {
            self.problem(n, format!("pose at t={} is not on the 0.5 s grid (expected t={expected})", pose.t));
        } else if index < 0.0 || (index as u64) < self.next_pose {
            self.problem(n, format!("duplicate pose at t={} (expected t={expected})", pose.t));
        } else if index as u64 > self.next_pose {
            self.problem(n, format!("pose gap: no pose at t={expected}, the next pose is at t={}", pose.t));
        }
        if index >= 0.0 {
            self.next_pose = self.next_pose.max(index as u64 + 1);
        }
        if let Some((last, line)) = &self.last_pose {
            let jump_m = (pose.x - last.x).hypot(pose.y - last.y);
            if jump_m > MAX_POSE_JUMP_M {
                let message = format!("pose jumps {jump_m:.1} m from the pose of line {line}");
                self.problem(n, message);
            }
        }
        self.last_pose = Some((pose.clone(), n));
    }

    /// A wake-up or the end must not come while a model call waits for its answer.
    fn no_open_call(&mut self, n: usize, what: &str) {
        if let Some((call, line)) = self.open_call.take() {
            let message = format!(
                "model_send call {call} (line {line}) has no model_reply or model_error before the {what} row"
            );
            self.problem(n, message);
        }
    }

    fn model_send(&mut self, n: usize, send: &ModelSendRow) {
        self.no_open_call(n, "next model_send");
        if send.call != self.last_call + 1 {
            self.problem(n, format!("model_send call {}, expected call {}", send.call, self.last_call + 1));
        }
        if send.wake != self.wake {
            let message =
                format!("model_send of wake {}, but the current wake-up is {}", send.wake, self.wake);
            self.problem(n, message);
        }
        for (i, block) in send.blocks.iter().enumerate() {
            let missing = match block.kind {
                BlockKind::Text if block.text.is_none() => Some("text"),
                BlockKind::Image if block.frame.is_none() => Some("frame"),
                BlockKind::ToolResult if block.tool_call_id.is_none() => Some("tool_call_id"),
                _ => None,
            };
            if let Some(key) = missing {
                self.problem(n, format!("block {i} of kind {} has no {key}", block.kind));
            }
            if let Some(frame) = &block.frame {
                self.frame_refs.push((frame.clone(), n));
            }
        }
        self.open_call = Some((send.call, n));
        self.last_call = send.call;
    }

    fn answer(&mut self, n: usize, kind: &str, call: u64) {
        match self.open_call.take() {
            Some((open, _)) if open == call => {}
            Some((open, line)) => {
                self.problem(n, format!("{kind} for call {call}, but call {open} (line {line}) is open"));
            }
            None => self.problem(n, format!("{kind} for call {call} with no open model_send")),
        }
    }

    fn frame(&mut self, n: usize, frame: &FrameRow) {
        if !is_frame_id(&frame.id) {
            self.problem(n, format!("frame id {:?} is not f and four digits or more", frame.id));
        }
        if frame.file != frame_file(&frame.id) {
            self.problem(n, format!("frame file {:?}, expected {:?}", frame.file, frame_file(&frame.id)));
        }
        if let Some((line, _)) = self.frames.get(&frame.id) {
            let message = format!("frame {} written twice (line {line})", frame.id);
            self.problem(n, message);
        } else {
            self.frames.insert(frame.id.clone(), (n, frame.file.clone()));
        }
    }

    fn end(&mut self, n: usize, end: &EndRow) {
        self.end_line = Some(n);
        self.no_open_call(n, "end");
        if end.score.end != end.end {
            self.problem(n, format!("score.end \"{}\" differs from end \"{}\"", end.score.end, end.end));
        }
        if end.score.success != end.success {
            self.problem(
                n,
                format!("score.success {} differs from success {}", end.score.success, end.success),
            );
        }
        if self.rows_version >= 2 {
            let folded =
                self.fold.end_score(end.end, end.success, end.t, end.score.fuel_mj, end.score.safety.clone());
            let differ = score_differences(&folded, &end.score);
            if !differ.is_empty() {
                self.problem(n, format!("the score is not the fold of the rows: {}", differ.join("; ")));
            }
        }
        let false_checks: BTreeSet<&String> =
            end.checks.iter().filter(|(_, ok)| !**ok).map(|(k, _)| k).collect();
        let failed: BTreeSet<&String> = end.failed.iter().collect();
        if false_checks != failed {
            self.problem(n, format!("failed {failed:?} is not the false checks {false_checks:?}"));
        }
        if end.digest.is_empty() || !end.digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            self.problem(n, format!("digest {:?} is not hex", end.digest));
        }
        if let Some((pose, _)) = &self.last_pose {
            if end.t - pose.t >= POSE_PERIOD_S + POSE_TOLERANCE_S {
                let message = format!("the pose track stops at t={}, before the end at t={}", pose.t, end.t);
                self.problem(n, message);
            }
        }
    }

    /// The checks after the last line: frame files, frame references, the end row.
    fn finish(mut self, lines: usize) -> FolderReport {
        if lines == 0 {
            let problem =
                Problem { file: self.run_file.clone(), line: None, message: "empty: no run row".into() };
            self.problems.push(problem);
        }
        self.frame_files();
        self.proxy_rows();
        if self.end_line.is_some() {
            self.recordings();
        }
        for (id, line) in std::mem::take(&mut self.frame_refs) {
            if !self.frames.contains_key(&id) {
                self.problem(line, format!("frame {id} has no frame row"));
            }
        }
        let cut_off = format!("no end row: the run was cut off after line {lines}");
        let status = match (self.problems.is_empty(), self.end_line) {
            (true, Some(_)) => Status::Ok,
            (true, None) => Status::Incomplete(cut_off),
            (false, end) => {
                if end.is_none() && lines > 0 {
                    self.problem(lines, cut_off);
                }
                Status::Invalid(self.problems)
            }
        };
        FolderReport { rows: lines, status }
    }

    /// The metering proxy's rows (`proxy.jsonl`, when there is one) decode and are well formed.
    fn proxy_rows(&mut self) {
        use crate::runfolder::proxy::{read_rows, PROXY_FILE};
        if let Err(problems) = read_rows(&self.folder) {
            let file = self.folder.join(PROXY_FILE);
            for (line, message) in problems {
                self.problems.push(Problem { file: file.clone(), line: Some(line), message });
            }
        }
    }

    /// A finished run's recordings (those its run row's `record` names) are readable, with their
    /// topics.
    fn recordings(&mut self) {
        use crate::runfolder::kinds::Record;
        use crate::runfolder::recording::{
            check, EPISODE_FILE, EPISODE_TOPICS, INTERFACE_FILE, INTERFACE_TOPICS,
        };
        let files: &[(&str, &[&str])] = match self.record {
            Record::All => &[(EPISODE_FILE, EPISODE_TOPICS), (INTERFACE_FILE, INTERFACE_TOPICS)],
            Record::Interface => &[(INTERFACE_FILE, INTERFACE_TOPICS)],
            Record::None => &[],
        };
        for &(name, topics) in files {
            let file = self.folder.join(name);
            if let Err(message) = check::read_summary(&file, topics) {
                self.problems.push(Problem { file, line: None, message });
            }
        }
    }

    /// Each frame row's file is a PNG of 640 x 692; each file under frames/ has a frame row.
    fn frame_files(&mut self) {
        let frames = std::mem::take(&mut self.frames);
        for (id, (line, file)) in &frames {
            let path = self.folder.join(file);
            let problem = match png_size(&path) {
                Ok((FRAME_WIDTH_PX, FRAME_HEIGHT_PX)) => None,
                Ok((w, h)) => {
                    Some(format!("frame {id}: {w} x {h} px, expected {FRAME_WIDTH_PX} x {FRAME_HEIGHT_PX}"))
                }
                Err(e) => Some(format!("frame {id}: {e}")),
            };
            if let Some(message) = problem {
                self.problems.push(Problem { file: path, line: Some(*line), message });
            }
        }
        let dir = self.folder.join(FRAMES_DIR);
        if let Ok(entries) = fs::read_dir(&dir) {
            let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            let named: BTreeSet<PathBuf> = frames.values().map(|(_, file)| self.folder.join(file)).collect();
            for path in paths {
                // A killed run may leave the file of a frame whose row it did not write.
                if !named.contains(&path) && self.end_line.is_some() {
                    let message = "a file under frames/ with no frame row".to_string();
                    self.problems.push(Problem { file: path, line: None, message });
                }
            }
        }
        self.frames = frames;
    }
}

/// The width and height of a PNG file from its header.
/// The keys where the score folded from the rows and the end row's score differ, each with both
/// values (`charged_s: rows 12.5, end row 13`).
fn score_differences(folded: &super::score::Score, written: &super::score::Score) -> Vec<String> {
    let as_map = |s: &super::score::Score| match serde_json::to_value(s) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let (a, b) = (as_map(folded), as_map(written));
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let show = |v: Option<&serde_json::Value>| v.map_or_else(|| "absent".to_string(), ToString::to_string);
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k}: rows {}, end row {}", show(a.get(k)), show(b.get(k))))
        .collect()
}

fn png_size(path: &Path) -> Result<(u32, u32), String> {
    let file = fs::File::open(path).map_err(|e| format!("cannot open the file: {e}"))?;
    let reader =
        png::Decoder::new(BufReader::new(file)).read_info().map_err(|e| format!("not a PNG: {e}"))?;
    let info = reader.info();
    Ok((info.width, info.height))
}
