//! The model clients on whole suites and across processes: the shipped scenarios through the stub
//! server for both protocols and every model mode, the text protocol, `calls_per_minute` across
//! two worker processes, a canary key, replay with the server stopped, `models --config`, and
//! the wire shape of requests pinned by snapshots.

mod common;
mod support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use acres_harness::runfolder::rows::Row;
use common::stub::*;

fn run_args<'a>(
    scenario: &'a str,
    model: &'a str,
    mode: &'a str,
    out: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut v =
        vec!["run", "--scenario", scenario, "--model", model, "--mode", mode, "--out", out, "--quiet"];
    v.extend_from_slice(extra);
    v
}

#[test]
fn the_shipped_suite_succeeds_through_the_stub_for_both_protocols_in_every_model_mode() {
    let dir = tmp("suite");
    let stub = StubProc::start(&dir, json!({"then": "scripted"}));
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        let mf = model_file(&dir, &format!("m_{proto:?}"), proto, &stub.url, "", "");
        for mode in ["text", "visual", "checked"] {
            // One mode at a time, removed after its checks: run folders with recordings are large.
            let out = dir.join(format!("runs_{proto:?}_{mode}"));
            let args =
                run_args("scenarios", mf.to_str().unwrap(), mode, out.to_str().unwrap(), &["--workers", "2"]);
            let o = harness(&args);
            assert!(o.status.success(), "{proto:?} {mode}: {}", String::from_utf8_lossy(&o.stderr));
            let v = harness(&["validate", out.to_str().unwrap()]);
            let text = String::from_utf8_lossy(&v.stdout);
            assert!(text.contains("10 run folders agree"), "{text}");
            let s = harness(&["score", out.to_str().unwrap(), "--json"]);
            let scores: Value = serde_json::from_slice(&s.stdout).unwrap();
            assert_eq!(scores.as_array().unwrap().len(), 10);
            for line in scores.as_array().unwrap() {
                let sc = &line["score"];
                assert_eq!(sc["success"], true, "{line}");
                for k in
                    ["reminders", "schema_errors", "fallback_protocol", "pictures_dropped", "model_errors"]
                {
                    assert_eq!(sc[k], 0, "{proto:?}: a pipeline free of errors repairs nothing: {line}");
                }
                assert!(sc["tokens"].as_u64().unwrap() > 0);
                assert!(sc["usd"].as_f64().unwrap() > 0.0);
            }
            std::fs::remove_dir_all(&out).unwrap();
        }
    }
}

#[test]
fn a_model_without_native_tools_plays_the_text_protocol() {
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        let (rows, reqs, o) = run_stub(
            &format!("textproto_{proto:?}"),
            proto,
            json!({"then": "scripted"}),
            "scenarios/t1_02_three_fields_deadline.json",
            "checked",
            "",
            "[capabilities]\ntools = false",
        );
        assert!(o.status.success(), "{proto:?}: {}", String::from_utf8_lossy(&o.stderr));
        let end = end_of(&rows);
        let tool_rows = rows.iter().filter(|r| matches!(r, Row::Tool(_))).count() as u64;
        assert_eq!(end.score.fallback_protocol, tool_rows, "{proto:?}: every call came as text");
        assert!(reqs.iter().all(|r| r["body"].get("tools").is_none()), "no native tools are declared");
        let system = match proto {
            Proto::OpenAi => reqs[0]["body"]["messages"][0]["content"].as_str().unwrap().to_string(),
            Proto::Anthropic => reqs[0]["body"]["system"].as_str().unwrap().to_string(),
        };
        assert!(system.contains("answer with exactly one JSON object"), "{system}");
    }
}

#[test]
fn calls_per_minute_holds_across_two_worker_processes() {
    let dir = tmp("perminute");
    // Three calls per run; two runs in two processes; at most four requests in any 60 s.
    let turns = json!([
        {"tool_calls": [{"name": "read", "arguments": {"what": "vehicle"}}]},
        {"tool_calls": [{"name": "read", "arguments": {"what": "budget"}}]},
        {"content": "Nothing more."}
    ]);
    let stub = StubProc::start(&dir, json!({"then": "done", "turns": turns}));
    let mf = model_file(&dir, "gated", Proto::OpenAi, &stub.url, "", "[limits]\ncalls_per_minute = 4");
    let out = dir.join("runs");
    let t0 = std::time::Instant::now();
    let o = harness(&run_args(
        "scenarios/t1_01_one_field.json",
        mf.to_str().unwrap(),
        "text",
        out.to_str().unwrap(),
        &["--scenario", "scenarios/t1_02_three_fields_deadline.json", "--workers", "2"],
    ));
    let _ = o;
    let times: Vec<f64> = stub.requests().iter().map(|r| r["t"].as_f64().unwrap()).collect();
    assert_eq!(times.len(), 6, "three calls in each of the two runs");
    for (i, a) in times.iter().enumerate() {
        let in_window = times[i..].iter().filter(|b| **b - a < 60.0).count();
        assert!(in_window <= 4, "{in_window} requests within 60 s of request {i}: {times:?}");
    }
    assert!(times[4] - times[0] >= 59.9, "the fifth request waited for the window: {times:?}");
    assert!(t0.elapsed().as_secs_f64() >= 59.9);
    let waits: usize = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| {
            rows_of(&e.path())
                .iter()
                .filter(|r| matches!(r, Row::ModelWait(w) if w.cause == "calls_per_minute"))
                .count()
        })
        .sum();
    assert!(waits >= 1, "the gate's waits are in the run folders as model_wait rows");
    // The world is held at the gate: a run whose request waited charged only the answers.
    for e in std::fs::read_dir(&out).unwrap().flatten() {
        let rows = rows_of(&e.path());
        assert!((end_of(&rows).score.charged_s - expected_charge_s(&rows)).abs() < 1e-6);
    }
}

#[test]
fn a_canary_key_reaches_the_server_and_no_file_of_the_run_folder() {
    let canary = "sk-acres-canary-7f3a9c2e41d8";
    let dir = tmp("canary");
    let stub = StubProc::start(&dir, json!({"then": "scripted"}));
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        let mf = model_file(
            &dir,
            &format!("k_{proto:?}"),
            proto,
            &stub.url,
            "api_key_env = \"ACRES_TEST_CANARY_KEY\"",
            "",
        );
        let out = dir.join("runs");
        let o = std::process::Command::new(bin())
            .args(run_args(
                "scenarios/t2_06_truck_on_the_lane.json",
                mf.to_str().unwrap(),
                "visual",
                out.to_str().unwrap(),
                &[],
            ))
            .current_dir(common::root())
            .env("ACRES_TEST_CANARY_KEY", canary)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(!String::from_utf8_lossy(&o.stderr).contains(canary));
    }
    assert!(stub.requests().iter().all(|r| r["key_sent"] == true), "every request carried the key");
    let files = assert_no_file_holds(&dir.join("runs"), canary);
    assert!(files > 10, "the run folders have their rows and frames ({files} files)");
    // Without the variable, the run is refused before it starts.
    let mf = dir.join("k_OpenAi.toml");
    let out = dir.join("refused");
    let o = harness(&run_args(
        "scenarios/t1_01_one_field.json",
        mf.to_str().unwrap(),
        "text",
        out.to_str().unwrap(),
        &[],
    ));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the environment variable ACRES_TEST_CANARY_KEY is not set"), "{err}");
    assert!(!out.exists(), "no run folder for a refused run");
}

#[test]
fn replay_of_a_stub_run_needs_no_server() {
    let dir = tmp("replay");
    // The first call is cut at its limit; the next one is refused once with a 429.
    let turns =
        json!([{"fault": "delay", "delay_s": 2.0}, {"fault": "status", "status": 429, "retry_after_s": 0.2}]);
    let mut stub = StubProc::start(&dir, json!({"then": "scripted", "turns": turns}));
    let mf = model_file(&dir, "r", Proto::Anthropic, &stub.url, "call_timeout_s = 1.0", "");
    let out = dir.join("runs");
    let o = harness(&run_args(
        "scenarios/t2_06_truck_on_the_lane.json",
        mf.to_str().unwrap(),
        "checked",
        out.to_str().unwrap(),
        &[],
    ));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    stub.stop();
    let folder = only_folder(&out);
    let o = harness(&["replay", folder.to_str().unwrap(), "--out", dir.join("replayed").to_str().unwrap()]);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("the world equals the recorded world"));
    // The replayed folder has the same retries and the same cut call.
    let a = rows_of(&folder);
    let b = rows_of(&only_folder(&dir.join("replayed")));
    let kinds =
        |rows: &[Row]| rows.iter().filter(|r| matches!(r, Row::ModelRetry(_) | Row::ModelError(_))).count();
    assert_eq!(kinds(&a), 2);
    assert_eq!(kinds(&a), kinds(&b));
    assert_eq!(end_of(&a).score, end_of(&b).score);
}

#[test]
fn models_lists_the_files_and_probes_a_server() {
    let o = harness(&["models"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for name in [
        "scripted",
        "claude-haiku-5-5-low",
        "claude-opus-5-5",
        "openai-template",
        "local-gemma",
        "local-qwen",
    ] {
        assert!(text.contains(name), "{text}");
    }
    assert!(text.contains("https://api.anthropic.com") && text.contains("http://127.0.0.1:8080/v1"));
    let dir = tmp("probe");
    let stub = StubProc::start(
        &dir,
        json!({"then": "done", "turns": [{"content": "ready", "tool_calls": [{"name": "echo", "arguments": {"word": "field"}}]}]}),
    );
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        let mf = model_file(&dir, &format!("p_{proto:?}"), proto, &stub.url, "", "");
        let o = harness(&["models", "--config", mf.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{proto:?}: {text}{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(text.matches("\nok   ").count(), 3, "{text}");
        assert!(
            text.contains("1 models: stub-model") && text.contains("tool call echo {\"word\":\"field\"}"),
            "{text}"
        );
    }
    drop(stub);
    // The server gone: a failure with its cause, and a non-zero exit.
    let mf = dir.join("p_OpenAi.toml");
    let o = harness(&["models", "--config", mf.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("FAIL") && text.contains("connection"), "{text}");
    // A bad model file is refused with the file, the key and the problem.
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "provider = \"openai\"\nmodel = \"m\"\n[retry]\ntries = 0\n").unwrap();
    let o = harness(&run_args(
        "scenarios/t1_01_one_field.json",
        bad.to_str().unwrap(),
        "text",
        dir.join("x").to_str().unwrap(),
        &[],
    ));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.toml: at retry.tries: must be at least 1"));
    let o = harness(&["models", "--config", "no-such-model"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no model configuration of that name"));
}

/// Mission times after a model call depend on the call's real latency (it is charged): each
/// `"t_s":<number>` in a text becomes `"t_s":"<t>"`.
fn redact_times(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("\"t_s\":") {
        let (head, tail) = rest.split_at(i + 6);
        out.push_str(head);
        let end = tail.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-')).unwrap_or(tail.len());
        out.push_str("\"<t>\"");
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Replaces picture data and run-dependent values so a request body can be pinned.
fn redact(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("\"t_s\":") => *s = redact_times(s),
        Value::String(s) if s.starts_with("data:image/png;base64,") => {
            *s = "data:image/png;base64,<png>".into()
        }
        Value::Array(a) => a.iter_mut().for_each(redact),
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if k == "data" && x.is_string() {
                    *x = json!("<png base64>");
                } else {
                    redact(x);
                }
            }
        }
        _ => {}
    }
}

fn wire_requests(proto: Proto, dir: &Path) -> Vec<Value> {
    // A look (a picture in a tool result), a read, then the scripted player.
    let turns = json!([
        {"tool_calls": [{"name": "look", "arguments": {"view": "map"}}, {"name": "read", "arguments": {"what": "vehicle"}}]},
        {"content": "Looked."}
    ]);
    let stub = StubProc::start(dir, json!({"then": "done", "turns": turns}));
    let mf = model_file(dir, "wire", proto, &stub.url, "", "");
    let out = dir.join("runs");
    // The run does not scout (the script ends its turn): only its requests matter here.
    let _ = harness(&run_args(
        "scenarios/t1_01_one_field.json",
        mf.to_str().unwrap(),
        "visual",
        out.to_str().unwrap(),
        &[],
    ));
    let mut reqs: Vec<Value> = stub.requests().into_iter().map(|r| r["body"].clone()).collect();
    reqs.iter_mut().for_each(redact);
    reqs
}

#[test]
fn the_wire_shape_of_openai_requests_is_pinned() {
    let reqs = wire_requests(Proto::OpenAi, &tmp("wire_openai"));
    assert_eq!(reqs.len(), 2);
    insta::assert_json_snapshot!("openai_first_request", reqs[0]);
    insta::assert_json_snapshot!("openai_second_request_messages", reqs[1]["messages"]);
}

#[test]
fn the_wire_shape_of_anthropic_requests_is_pinned() {
    let reqs = wire_requests(Proto::Anthropic, &tmp("wire_anthropic"));
    assert_eq!(reqs.len(), 2);
    insta::assert_json_snapshot!("anthropic_first_request", reqs[0]);
    insta::assert_json_snapshot!("anthropic_second_request_messages", reqs[1]["messages"]);
}

#[test]
fn parallel_runs_bounds_the_runs_that_use_the_service_at_once() {
    let dir = tmp("parallel");
    let turns = json!([
        {"tool_calls": [{"name": "read", "arguments": {"what": "vehicle"}}]},
        {"tool_calls": [{"name": "read", "arguments": {"what": "budget"}}]},
        {"content": "Nothing more."}
    ]);
    let stub = StubProc::start(&dir, json!({"then": "done", "delay_s": 0.2, "turns": turns}));
    let scenarios = [
        "scenarios/t1_01_one_field.json",
        "scenarios/t1_02_three_fields_deadline.json",
        "scenarios/t1_03_time_limit_excludes_a_field.json",
    ];
    let order = |parallel: &str, flag: &str| -> Vec<String> {
        let mf = model_file(
            &dir,
            &format!("par{parallel}{}", flag.trim_start_matches('-')),
            Proto::OpenAi,
            &stub.url,
            "",
            &format!("[limits]\nparallel_runs = {parallel}"),
        );
        let out = dir.join(format!("runs{parallel}{flag}"));
        let before = stub.requests().len();
        let mut args =
            run_args(scenarios[0], mf.to_str().unwrap(), "text", out.to_str().unwrap(), &[flag, "3"]);
        for s in &scenarios[1..] {
            args.extend_from_slice(&["--scenario", s]);
        }
        let _ = harness(&args);
        stub.requests()[before..]
            .iter()
            .map(|r| r["body"]["messages"][1]["content"].as_str().unwrap_or("").to_string())
            .collect()
    };
    // One run at a time: each conversation's three requests come together.
    for flag in ["--concurrent", "--workers"] {
        let seq = order("1", flag);
        assert_eq!(seq.len(), 9, "{flag}");
        for block in seq.chunks(3) {
            assert!(block.iter().all(|k| *k == block[0]), "{flag}: runs overlapped: {seq:?}");
        }
    }
    // Three at a time: the conversations interleave.
    let seq = order("3", "--concurrent");
    assert!(seq.chunks(3).any(|b| b.iter().any(|k| *k != b[0])), "three runs at once interleave: {seq:?}");
}

#[test]
fn a_repeats_seed_and_the_temperature_reach_the_model_and_the_run_row() {
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        let dir = tmp(&format!("seeded_{proto:?}"));
        let stub = StubProc::start(&dir, json!({"then": "scripted"}));
        let mf = model_file(&dir, "seeded", proto, &stub.url, "temperature = 0.25", "");
        let spec = dir.join("sweep.toml");
        std::fs::write(
            &spec,
            format!(
                "scenarios = [\"{}\"]\nmodels = [\"{}\"]\nmodes = [\"text\"]\nrepeats = 2\nseed = 5\nrecord = \"none\"\n",
                support::root().join("scenarios/t1_01_one_field.json").display(),
                mf.display()
            ),
        )
        .unwrap();
        let out = dir.join("out");
        let o = harness(&["sweep", spec.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let reqs = stub.requests();
        assert!(reqs.len() >= 2, "{proto:?}: {} requests", reqs.len());
        let mut seeds: Vec<Value> = reqs.iter().map(|r| r["body"]["seed"].clone()).collect();
        seeds.sort_by_key(|s| s.as_u64());
        seeds.dedup();
        for r in &reqs {
            assert_eq!(r["body"]["temperature"], json!(0.25), "{proto:?}: {}", r["body"]);
        }
        // Repeat r runs with seed 5 + r − 1; OpenAI-compatible servers get it, Anthropic's has no
        // seed parameter.
        let expected = match proto {
            Proto::OpenAi => vec![json!(5), json!(6)],
            Proto::Anthropic => vec![Value::Null],
        };
        assert_eq!(seeds, expected, "{proto:?}");
        for rep in [1u64, 2] {
            let run = dir.join(format!("out/seeded/text/vehicle/t1_01_one_field/{rep}"));
            let folder = only_folder(&run);
            let Some(Row::Run(row)) = rows_of(&folder).into_iter().next() else { panic!("no run row") };
            let options = row.planner.expect("a sweep records the planner").options;
            assert_eq!(options.get("temperature"), Some(&json!(0.25)));
            let seed = (proto == Proto::OpenAi).then(|| json!(4 + rep));
            assert_eq!(options.get("seed"), seed.as_ref(), "{proto:?} rep {rep}: {options:?}");
            assert_eq!(row.identity.seed, 4 + rep);
        }
    }
}

/// `run --probe`: the probe is made once before the runs and its verdicts go into every run row's
/// `serving.probe`, the same verdicts `models --config NAME --probe --json` gives against the
/// same server; workers record the parent's verdicts without probing again (the stub's record
/// counts the probe's requests); a failed verdict (pictures refused while the file says the model
/// takes them) stops before any run with exit 1 and no run folder; the scripted planner has no
/// server to probe (exit 2).
#[test]
fn run_probe_records_the_verdicts_in_the_run_row_and_stops_on_a_failed_one() {
    let dir = tmp("run_probe");
    // Every conversation's first turn: a call of echo, and pictures refused as llama.cpp does.
    let script = json!({"then": "done", "turns": [{"fault": "refuse_pictures", "server": "llama.cpp", "times": 1000,
        "tool_calls": [{"name": "echo", "arguments": {"word": "field"}}]}]});
    let probe_requests = |record: &Path| {
        std::fs::read_to_string(record).unwrap_or_default().matches("You are a conformance test").count()
    };
    // The verdicts as the probe command gives them, against a server of its own.
    let text_only = "[capabilities]\nimages = false";
    let reference = {
        let d = dir.join("reference");
        std::fs::create_dir_all(&d).unwrap();
        let stub = StubProc::start(&d, script.clone());
        let mf = model_file(&d, "m", Proto::OpenAi, &stub.url, "", text_only);
        let o = harness(&["models", "--config", mf.to_str().unwrap(), "--probe", "--json"]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
        let checks: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
        let verdicts: serde_json::Map<String, Value> =
            checks.iter().map(|c| (c["check"].as_str().unwrap().to_string(), c["verdict"].clone())).collect();
        assert_eq!(verdicts["pictures"], "pass", "refused, but the file says text only: {verdicts:?}");
        assert_eq!(verdicts["tools"], "pass", "{verdicts:?}");
        let n = probe_requests(&stub.record);
        assert!(n > 0, "the probe's requests in the stub's record: {n}");
        (verdicts, n)
    };
    let (verdicts, per_probe) = reference;
    let stub = StubProc::start(&dir, script.clone());
    let mf = model_file(&dir, "m", Proto::OpenAi, &stub.url, "", text_only);
    let out = dir.join("runs");
    let o = harness(&run_args(
        "scenarios/t1_01_one_field.json",
        mf.to_str().unwrap(),
        "text",
        out.to_str().unwrap(),
        &["--scenario", "scenarios/t1_02_three_fields_deadline.json", "--workers", "2", "--probe"],
    ));
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", support::text(&o));
    // Under --quiet a probe that passes prints nothing; its verdicts are in the rows.
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("the conformance probe of m"),
        "{}",
        support::text(&o)
    );
    assert_eq!(probe_requests(&stub.record), per_probe, "one probe for the parent and both workers");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().flatten().map(|e| e.path()).collect();
    folders.sort();
    assert_eq!(folders.len(), 2, "{folders:?}");
    for folder in &folders {
        let rows = rows_of(folder);
        let Some(Row::Run(run)) = rows.first() else { panic!("no run row") };
        let probe = serde_json::to_value(&run.serving.as_ref().expect("serving").probe).unwrap();
        assert_eq!(probe, Value::Object(verdicts.clone()), "{}", folder.display());
        assert!(
            acres_harness::runfolder::validate_folder(folder).is_ok(),
            "{}",
            acres_harness::runfolder::validate_folder(folder)
        );
    }
    // The file says the model takes pictures: the refusal spoils a visual run.
    let mf = model_file(&dir, "pictures", Proto::OpenAi, &stub.url, "", "");
    let out = dir.join("refused");
    let o = harness(&run_args(
        "scenarios/t1_01_one_field.json",
        mf.to_str().unwrap(),
        "visual",
        out.to_str().unwrap(),
        &["--probe"],
    ));
    assert_eq!(o.status.code(), Some(1), "{}", support::text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("failed the probe (pictures)") && err.contains("nothing was run"), "{err}");
    assert!(err.contains("image input is not supported"), "the table says what the server answered: {err}");
    assert!(std::fs::read_dir(&out).map_or(true, |d| d.count() == 0), "a run folder was made");
    // No server behind the scripted planner.
    let o = harness(&run_args(
        "scenarios/t1_01_one_field.json",
        "scripted",
        "text",
        out.to_str().unwrap(),
        &["--probe"],
    ));
    assert_eq!(o.status.code(), Some(2), "{}", support::text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--probe: the scripted planner has no model server"),
        "{}",
        support::text(&o)
    );
}
