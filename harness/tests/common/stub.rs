//! The stub model server as a real process, model files pointing at it, and runs of the harness
//! binary against it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{json, Value};

use acres_harness::runfolder::rows::{EndRow, Row};

/// The harness binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_acres-harness"))
}

pub use crate::support::TempDir as Tmp;

/// A fresh temporary folder for one test.
pub fn tmp(name: &str) -> Tmp {
    Tmp::new(name)
}

/// A stub server process, killed on drop.
pub struct StubProc {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The record file.
    pub record: PathBuf,
}

impl StubProc {
    /// Starts `stub-server` with a script (JSON value) in `dir`.
    pub fn start(dir: &Path, script: Value) -> Self {
        let script_file = dir.join("script.json");
        std::fs::write(&script_file, script.to_string()).unwrap();
        let record = dir.join("requests.jsonl");
        let mut child = Command::new(bin())
            .args(["stub-server", "--script"])
            .arg(&script_file)
            .arg("--record")
            .arg(&record)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the stub server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url:?}");
        StubProc { child, url, record }
    }

    /// The recorded requests (POSTs only, in order).
    pub fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.record).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["method"] == "POST")
            .collect()
    }

    /// Stops the server.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for StubProc {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The two protocols.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Proto {
    /// OpenAI chat completions.
    OpenAi,
    /// Anthropic messages.
    Anthropic,
}

/// Writes a model file for the stub in `dir`; `extra` is TOML appended (tables after the keys).
pub fn model_file(dir: &Path, name: &str, proto: Proto, url: &str, top: &str, tables: &str) -> PathBuf {
    let (provider, base) = match proto {
        Proto::OpenAi => ("openai", format!("{url}/v1")),
        Proto::Anthropic => ("anthropic", url.to_string()),
    };
    let text = format!(
        "provider = \"{provider}\"\nmodel = \"stub-model\"\nbase_url = \"{base}\"\n{top}\n\
         [retry]\ntries = 4\nwait_s = 0.1\nfactor = 2\nmax_wait_s = 1\ntotal_wait_s = 5\n\
         [prices]\ninput = 1.0\noutput = 4.0\n[price_source]\nsource = \"test\"\ndate = \"2026-12-01\"\n{tables}\n"
    );
    let f = dir.join(format!("{name}.toml"));
    std::fs::write(&f, text).unwrap();
    f
}

/// Runs the harness binary with `args`.
pub fn harness(args: &[&str]) -> Output {
    Command::new(bin()).args(args).current_dir(super::root()).output().expect("the harness runs")
}

/// A finished run folder's rows.
pub fn rows_of(folder: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(folder.join("run.jsonl")).unwrap();
    text.lines().map(|l| Row::decode(l).unwrap()).collect()
}

/// The only run folder below `out`.
pub fn only_folder(out: &Path) -> PathBuf {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(out).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    assert_eq!(v.len(), 1, "{v:?}");
    v.pop().unwrap()
}

/// The end row.
pub fn end_of(rows: &[Row]) -> &EndRow {
    match rows.last() {
        Some(Row::End(e)) => e,
        other => panic!("the last row is not an end row: {other:?}"),
    }
}

/// The mission time charged for the replies of a run: each answering latency rounded to the
/// control step, plus the limits charged by calls cut at their limit.
pub fn expected_charge_s(rows: &[Row]) -> f64 {
    let dt = 0.05;
    rows.iter()
        .map(|r| match r {
            Row::ModelReply(m) => (m.latency_s / dt).round() * dt,
            Row::ModelError(e) => (e.latency_s / dt).round() * dt,
            _ => 0.0,
        })
        .sum()
}

/// Runs one scenario through a stub script with a model file; returns the folder's rows and
/// the stub's recorded requests.
pub fn run_stub(
    name: &str,
    proto: Proto,
    script: Value,
    scenario: &str,
    mode: &str,
    top: &str,
    tables: &str,
) -> (Vec<Row>, Vec<Value>, Output) {
    let dir = tmp(name);
    let stub = StubProc::start(&dir, script);
    let mf = model_file(&dir, name, proto, &stub.url, top, tables);
    let out = dir.join("runs");
    let o = harness(&[
        "run",
        "--scenario",
        scenario,
        "--model",
        mf.to_str().unwrap(),
        "--mode",
        mode,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let folder = only_folder(&out);
    let v = harness(&["validate", folder.to_str().unwrap()]);
    assert!(v.status.success(), "{name}: validate: {}", String::from_utf8_lossy(&v.stdout));
    (rows_of(&folder), stub.requests(), o)
}

/// A script: these turns, then the scripted player.
pub fn script(turns: Value) -> Value {
    json!({"then": "scripted", "turns": turns})
}

/// Asserts that no file below `dir` holds `needle` (a key canary); returns how many files it read.
#[allow(dead_code)] // not every test binary that has this module uses it
pub fn assert_no_file_holds(dir: &Path, needle: &str) -> usize {
    let mut files = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files += 1;
                let bytes = std::fs::read(&p).unwrap();
                let hit = bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
                assert!(!hit, "{} holds the key", p.display());
            }
        }
    }
    files
}
