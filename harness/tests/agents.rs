//! The MCP face end to end with a real MCP client: the official Python SDK (`mcp` from PyPI, in
//! the test command's venv) plays shipped scenarios through `acres-harness mcp` over stdio and
//! over streamable HTTP on 127.0.0.1 (`tests/mcp_agent.py`): success, pictures, progress
//! notifications while it waits, a refused tool after the end, a refused second session, the
//! charged thinking time to the step, and the run folder's tools (validate, score, replay).
//! The tests with the SDK and shellcheck are ignored by the plain `cargo test` and run by the
//! test command; without the SDK they fail (`tests/support/require.rs`).

#[path = "../../tests/support/require.rs"]
mod require;
mod support;
use support::{harness, poll, root, text, Child, TempDir};

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_agent.py");
const BIN: &str = env!("CARGO_BIN_EXE_acres-harness");

/// The arguments of an `mcp` run of `scenario` into `out`.
fn mcp_args(scenario: &str, out: &Path, name: &str) -> Vec<String> {
    let scenario = root().join("scenarios").join(scenario).display().to_string();
    ["mcp", "--scenario", &scenario, "--mode", "checked", "--out", &out.display().to_string()]
        .into_iter()
        .chain(["--agent-name", name, "--pace", "60"])
        .map(String::from)
        .collect()
}

fn report(o: &Output) -> Value {
    assert!(o.status.success(), "mcp_agent.py failed: {}", text(o));
    let last = String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or_default().to_string();
    serde_json::from_str(&last).unwrap_or_else(|e| panic!("no report ({e}): {}", text(o)))
}

fn rows(folder: &Path) -> Vec<Value> {
    std::fs::read_to_string(folder.join("run.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What every successful play shows: the run ended done, pictures, progress while waiting, a
/// refused tool after the end.
fn check_play(r: &Value) {
    assert_eq!(r["end"]["end"], "done", "{r}");
    assert_eq!(r["end"]["success"], true, "{r}");
    assert!(r["images"].as_u64().unwrap() >= 2, "the start wake-up's map and look's picture: {r}");
    assert!(r["progress"].as_u64().unwrap() >= 2, "progress notifications while waiting: {r}");
    let first = r["progress_messages"][0].as_str().unwrap();
    assert!(first.starts_with("mission time "), "{first}");
    assert_eq!(r["after_end"]["error"], true);
    let after = r["after_end"]["text"].as_str().unwrap();
    assert!(after.contains("the run has ended: end code done"), "{after}");
    let tools: Vec<&str> = r["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(tools, ["look", "read", "plan", "dispatch", "note", "wait_for_wake"]);
    assert_eq!(r["instructions"], true);
}

/// The run folder of an agent's run: the agent's name as the model, and validate, score and
/// replay work on it.
fn check_folder(folder: &Path, name: &str, face: &str) {
    let rs = rows(folder);
    assert_eq!(rs[0]["type"], "run");
    assert_eq!(rs[0]["model"], name);
    let planner = &rs[0]["planner"];
    assert_eq!((&planner["kind"], &planner["face"]), (&"agent".into(), &face.into()), "{planner}");
    assert_eq!(planner["options"]["agent_name"], name);
    assert_eq!(planner["versions"]["harness"], acres_harness::HARNESS_VERSION);
    let f = folder.display().to_string();
    let o = harness(&["validate", &f]);
    assert!(o.status.success(), "validate: {}", text(&o));
    let o = harness(&["score", &f]);
    assert!(o.status.success(), "score: {}", text(&o));
    assert!(text(&o).contains(name), "{}", text(&o));
    let o = harness(&["replay", &f]);
    assert!(o.status.success(), "replay: {}", text(&o));
}

fn only_folder(out: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(out).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.pop().unwrap()
}

const PLAY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/agent_play.sh");

#[test]
fn a_shell_script_plays_a_scenario_through_the_line_protocol() {
    let out = TempDir::new("line");
    let socket = out.path("agent.sock");
    let mut args = mcp_args("t1_01_one_field.json", &out.join("runs"), "sh-agent");
    args[0] = "serve".into();
    args.extend(["--socket", &socket, "--linger-s", "1"].map(String::from));
    let mut server = Child(
        Command::new(BIN)
            .arg("agent")
            .args(&args)
            .current_dir(root())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let first = BufReader::new(server.0.stdout.take().unwrap()).lines().next().unwrap().unwrap();
    assert_eq!(first, socket);
    let o = Command::new("bash")
        .arg(PLAY)
        .arg("F53")
        .env("ACRES_HARNESS", BIN)
        .env("ACRES_AGENT_SOCKET", &socket)
        .output()
        .unwrap();
    assert!(o.status.success(), "agent_play.sh: {}", text(&o));
    let replies: Vec<Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // The refused call before the start names the phase; every reply carries the phase.
    assert_eq!(replies[0]["ok"], false);
    assert_eq!(replies[0]["phase"], "starting");
    assert!(replies.iter().all(|r| r["phase"].is_string() && r["t_s"].is_number()));
    assert!(replies.iter().any(|r| r["picture"].as_str().is_some_and(|p| Path::new(p).is_file())));
    let last = replies.last().unwrap();
    assert_eq!((&last["end"], &last["success"], &last["ok"]), (&"done".into(), &true.into(), &true.into()));
    // After the end: a tool answers that the run has ended, with the end code.
    let o = Command::new(BIN)
        .args(["agent", "send", "read", r#"{"what": "vehicle"}"#, "--socket", &socket])
        .output();
    let o = o.unwrap();
    if o.status.code() == Some(1) {
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!((&r["phase"], &r["end"]), (&"ended".into(), &"done".into()), "{r}");
    } else {
        // The server has gone already (its linger is short): the command says so, exit 2.
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    }
    let status = poll(Duration::from_secs(30), Duration::from_millis(100), || server.0.try_wait().unwrap());
    assert_eq!(status.map(|s| s.code()), Some(Some(0)));
    assert!(!Path::new(&socket).exists(), "the socket file goes with the server");
    check_folder(&only_folder(&out.join("runs")), "sh-agent", "line");
}

/// The run row's record of the MCP SDK's version is the version the build locked.
#[test]
fn the_recorded_rmcp_version_is_the_locked_one() {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    let want = format!("name = \"rmcp\"\nversion = \"{}\"", acres_harness::agents::mcp::RMCP_VERSION);
    assert!(lock.contains(&want), "Cargo.lock has no {want}");
}

/// `--read-only` registers only the tools that change nothing: a dispatch is refused as an
/// unknown tool, `read` runs, and the run (nothing scouted) ends without success: exit 1.
#[test]
fn a_read_only_agent_cannot_dispatch() {
    let out = TempDir::new("line-read-only");
    let socket = out.path("agent.sock");
    let mut args = mcp_args("t1_01_one_field.json", &out.join("runs"), "ro-agent");
    args[0] = "serve".into();
    args.extend(["--socket", &socket, "--linger-s", "0", "--read-only"].map(String::from));
    let mut server = Child(
        Command::new(BIN)
            .arg("agent")
            .args(&args)
            .current_dir(root())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let first = BufReader::new(server.0.stdout.take().unwrap()).lines().next().unwrap().unwrap();
    assert_eq!(first, socket);
    let agent = |args: &[&str]| {
        let o = Command::new(BIN).arg("agent").args(args).args(["--socket", &socket]).output().unwrap();
        (o.status.code(), serde_json::from_slice::<Value>(&o.stdout).unwrap_or(Value::Null))
    };
    assert_eq!(agent(&["wait"]).0, Some(0));
    let (code, r) = agent(&["send", "dispatch", r#"{"skill": "goto", "arguments": {"field": "F53"}}"#]);
    assert_eq!(code, Some(1));
    assert_eq!(r["error"], "unknown tool \"dispatch\"; the tools are look, read", "{r}");
    let (code, r) = agent(&["send", "read", r#"{"what": "vehicle"}"#]);
    assert_eq!((code, &r["ok"]), (Some(0), &true.into()), "{r}");
    let (code, r) = agent(&["end"]);
    assert_eq!((code, &r["end"], &r["success"]), (Some(0), &"done".into(), &false.into()), "{r}");
    let status = poll(Duration::from_secs(30), Duration::from_millis(100), || server.0.try_wait().unwrap());
    assert_eq!(status.map(|s| s.code()), Some(Some(1)), "a run without success exits 1");
}

/// Bad input to the line protocol's commands: exit 2 with the problem named; a server that does
/// not answer is the environment: exit 3.
#[test]
fn line_commands_name_bad_input_and_a_missing_server() {
    let tmp = TempDir::new("line-bad");
    let socket = tmp.path("none.sock");
    let o = harness(&["agent", "send", "read", "{not json", "--socket", &socket]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("agent send read: the arguments are not JSON"), "{}", text(&o));
    let o = harness(&["agent", "send", "read", "[1]", "--socket", &socket]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("must be one JSON object"), "{}", text(&o));
    let o = harness(&["agent", "status", "--socket", &socket]);
    assert_eq!(o.status.code(), Some(3));
    assert!(text(&o).contains("no agent server answers"), "{}", text(&o));
    let o = harness(&[
        "mcp",
        "--scenario",
        "scenarios/t1_01_one_field.json",
        "--out",
        &tmp.path("o"),
        "--agent-name",
        "a b",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--agent-name \"a b\""), "{}", text(&o));
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    #[test]
    #[ignore = "needs the MCP SDK (mcp) in the test venv, and shellcheck: run by tools/test.sh"]
    fn an_agent_plays_a_scenario_over_stdio_and_its_thinking_time_is_charged_to_the_step() {
        require::python("mcp");
        let out = TempDir::new("mcp-stdio");
        // Sleeps before the calls: none before the first wait_for_wake, then 1.2 s before read and
        // 0.7 s before plan (charged as thinking time).
        let sleeps = [0.0, 1.2, 0.7];
        let o = Command::new(require::python3())
            .arg(AGENT)
            .args(["--sleeps", "0,1.2,0.7", "stdio", BIN])
            .args(mcp_args("t1_01_one_field.json", &out, "py-agent"))
            .current_dir(root())
            .output()
            .unwrap();
        let r = report(&o);
        check_play(&r);
        let folder = only_folder(&out);
        assert!(folder.ends_with("t1_01_one_field__checked__py-agent"), "{folder:?}");
        // The thinking time: each reply's latency is the sleep (plus the transport), and the mission
        // clock moved by that latency rounded to the control step between the send and the reply.
        let rs = rows(&folder);
        let dt = 0.05;
        let replies: Vec<&Value> = rs.iter().filter(|r| r["type"] == "model_reply").collect();
        let sends: Vec<&Value> = rs.iter().filter(|r| r["type"] == "model_send").collect();
        for (i, want) in [(0usize, sleeps[1]), (1, sleeps[2])] {
            let reply = replies[i];
            let latency = reply["latency_s"].as_f64().unwrap();
            assert!(
                latency >= want && latency < want + 0.4,
                "call {i}: latency {latency} for a sleep of {want}"
            );
            let send = sends.iter().find(|s| s["call"] == reply["call"]).unwrap();
            let moved = reply["t"].as_f64().unwrap() - send["t"].as_f64().unwrap();
            let steps = (latency / dt).round();
            assert!((moved - steps * dt).abs() < 1e-6, "call {i}: the clock moved {moved} s for {latency} s");
        }
        assert_eq!(replies[0]["tool_calls"][0]["name"], "read");
        assert_eq!(replies[1]["tool_calls"][0]["name"], "plan");
        check_folder(&folder, "py-agent", "mcp-stdio");
    }

    #[test]
    #[ignore = "needs the MCP SDK (mcp) in the test venv, and shellcheck: run by tools/test.sh"]
    fn an_agent_plays_over_streamable_http_and_a_second_session_is_refused() {
        require::python("mcp");
        let out = TempDir::new("mcp-http");
        let mut args = mcp_args("t1_02_three_fields_deadline.json", &out, "py-http");
        args.extend(["--http", "0", "--linger-s", "3"].map(String::from));
        let mut server =
            Child(Command::new(BIN).args(&args).current_dir(root()).stdout(Stdio::piped()).spawn().unwrap());
        let mut lines = BufReader::new(server.0.stdout.take().unwrap()).lines();
        let url = lines.next().unwrap().unwrap();
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
        let mut agent = Command::new(require::python3())
            .arg(AGENT)
            .args(["http", &url])
            .current_dir(root())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut agent_out = BufReader::new(agent.stdout.take().unwrap()).lines();
        let connected = agent_out.next().unwrap().unwrap();
        assert!(connected.contains("connected"), "{connected}");
        // While the first client plays, the run is its session's: a second session is refused.
        let second = Command::new(require::python3()).arg(AGENT).args(["second", &url]).output().unwrap();
        let last = agent_out.map(Result::unwrap).last().unwrap_or_default();
        assert!(agent.wait().unwrap().success(), "mcp_agent.py http failed: {last}");
        let r: Value = serde_json::from_str(&last).unwrap();
        check_play(&r);
        let s = report(&second);
        assert_eq!(s["second"], "refused", "{s}");
        assert!(s["error"].as_str().unwrap().contains("attached to this run already"), "{s}");
        let status =
            poll(Duration::from_secs(30), Duration::from_millis(100), || server.0.try_wait().unwrap());
        assert_eq!(status.map(|s| s.code()), Some(Some(0)), "the server exits 0 after a successful run");
        check_folder(&only_folder(&out), "py-http", "mcp-http");
    }

    /// The script is shellcheck-clean.
    #[test]
    #[ignore = "needs the MCP SDK (mcp) in the test venv, and shellcheck: run by tools/test.sh"]
    fn the_play_script_is_shellcheck_clean() {
        require::program("shellcheck", "--version", "apt-get install shellcheck");
        let o = Command::new("shellcheck").arg(PLAY).output().expect("shellcheck runs");
        assert!(o.status.success(), "shellcheck: {}", text(&o));
    }
}
