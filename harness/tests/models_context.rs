//! Pictures refused as real servers refuse them, and context management for small windows,
//! through the stub model server as a real process on 127.0.0.1.

mod common;
mod support;

use serde_json::{json, Value};

use acres_harness::planners::models::context::NOTE_MARK;
use acres_harness::planners::models::stub::wire::request_len;
use acres_harness::runfolder::rows::{ModelErrorKind, Row};
use common::stub::*;

const T1: &str = "scenarios/t1_01_one_field.json";
const T3: &str = "scenarios/t1_02_three_fields_deadline.json";

fn retries(rows: &[Row]) -> Vec<(u32, String)> {
    rows.iter()
        .filter_map(|r| match r {
            Row::ModelRetry(m) => Some((m.try_n, m.cause.clone())),
            _ => None,
        })
        .collect()
}

fn error_kinds(rows: &[Row]) -> Vec<ModelErrorKind> {
    rows.iter()
        .filter_map(|r| match r {
            Row::ModelError(m) => Some(m.kind),
            _ => None,
        })
        .collect()
}

fn with_pictures(reqs: &[Value]) -> usize {
    reqs.iter().filter(|r| r["body"].to_string().contains("base64")).count()
}

#[test]
fn pictures_refused_in_each_servers_form_are_dropped_once_and_never_sent_again() {
    for server in ["llama.cpp", "vllm", "stub"] {
        let turns = json!([{"fault": "refuse_pictures", "server": server}]);
        let name = format!("refuse_{}", server.replace('.', "_"));
        let (rows, reqs, o) = run_stub(&name, Proto::OpenAi, script(turns), T1, "visual", "", "");
        assert!(o.status.success(), "{server}: {}", String::from_utf8_lossy(&o.stderr));
        let end = end_of(&rows);
        // One repair turn, no transient-fault tries.
        assert_eq!(retries(&rows), vec![(2, "pictures refused".to_string())], "{server}");
        assert!(error_kinds(&rows).is_empty(), "{server}: {:?}", error_kinds(&rows));
        let frames = rows.iter().filter(|r| matches!(r, Row::Frame(_))).count() as u64;
        assert!(frames >= 2, "{server}");
        assert_eq!(end.score.pictures_dropped, frames, "{server}");
        assert_eq!(with_pictures(&reqs), 1, "{server}: only the refused request carried a picture");
        assert!(end.success, "{server}");
    }
}

#[test]
fn a_500_that_does_not_name_pictures_stays_a_transient_fault_in_a_visual_run() {
    let turns = json!([{"fault": "status", "status": 500}]);
    let (rows, reqs, _) = run_stub("visual500", Proto::OpenAi, script(turns), T1, "visual", "", "");
    assert_eq!(retries(&rows), vec![(2, "status 500".to_string())]);
    let end = end_of(&rows);
    assert_eq!(end.score.pictures_dropped, 0);
    // The try after the fault still carries the picture.
    assert!(reqs[1]["body"].to_string().contains("base64"));
    assert!(end.success);
}

#[test]
fn the_servers_context_error_is_a_context_model_error_never_tried_again() {
    let turns = json!([{"fault": "context"}]);
    let (rows, reqs, _) = run_stub("ctx_err", Proto::OpenAi, script(turns), T1, "text", "", "");
    assert!(retries(&rows).is_empty(), "{:?}", retries(&rows));
    assert_eq!(error_kinds(&rows), vec![ModelErrorKind::Context]);
    let first_error = rows.iter().find_map(|r| match r {
        Row::ModelError(e) => Some(e.error.clone()),
        _ => None,
    });
    assert!(first_error.unwrap().contains("exceed_context_size_error"));
    // The error's request and the next wake-up's: no second try of the same request.
    let first_two: Vec<String> = reqs.iter().take(2).map(|r| r["body"]["messages"].to_string()).collect();
    assert_ne!(first_two[0], first_two[1]);
    assert_eq!(end_of(&rows).score.model_errors, 1);
}

/// The largest prompt (stub tokens) of a run's requests.
fn largest_prompt(reqs: &[Value]) -> u64 {
    reqs.iter().map(|r| (request_len(&r["body"]) / 4) as u64 + 1).max().unwrap_or(0)
}

#[test]
fn a_long_run_in_a_small_window_leaves_out_old_exchanges_and_never_passes_it() {
    for mode in ["text", "visual"] {
        // The run as it is without a window: its largest request.
        let top = "max_output_tokens = 200";
        let (rows, reqs, _) =
            run_stub(&format!("ctx_free_{mode}"), Proto::OpenAi, script(json!([])), T3, mode, top, "");
        assert!(end_of(&rows).success);
        let largest = largest_prompt(&reqs);
        let first = largest_prompt(&reqs[..1]);
        // A window halfway between the first request and the largest (and the reply's 200), for
        // the server and the model file alike.
        let window = (first + largest) / 2 + 200;
        let mut s = script(json!([]));
        s["n_ctx"] = json!(window);
        let top = format!("{top}\ncontext_tokens = {window}");
        let (rows, reqs, _) = run_stub(&format!("ctx_small_{mode}"), Proto::OpenAi, s, T3, mode, &top, "");
        let end = end_of(&rows);
        let errors: Vec<String> = rows
            .iter()
            .filter_map(|r| match r {
                Row::ModelError(e) => Some(e.error.clone()),
                _ => None,
            })
            .collect();
        assert!(errors.is_empty(), "{mode}: window {window} (largest {largest}): {errors:?}");
        assert!(largest_prompt(&reqs) + 200 <= window, "{mode}: {} past {window}", largest_prompt(&reqs));
        if mode == "text" {
            assert!(end.score.context_trims > 0);
            // The history says so, in the first user message.
            let last = reqs.last().unwrap();
            assert!(last["body"]["messages"][1].to_string().contains(NOTE_MARK));
        } else {
            // Pictures go first: all but the newest became text, which was enough here.
            assert!(end.score.pictures_dropped > 0 || end.score.context_trims > 0, "{mode}");
        }
        // The trims in the rows add up to the score.
        let trims: u64 = rows
            .iter()
            .filter_map(|r| match r {
                Row::ModelReply(m) => Some(m.repairs.context_trims),
                _ => None,
            })
            .sum();
        assert_eq!(trims, end.score.context_trims, "{mode}");
        assert!(end.success, "{mode}: a trimmed history still completes the mission");
    }
}

#[test]
fn a_request_that_cannot_fit_ends_the_wake_up_with_a_context_error_unsent() {
    let (rows, reqs, _) =
        run_stub("ctx_nofit", Proto::OpenAi, script(json!([])), T1, "text", "context_tokens = 500", "");
    let kinds = error_kinds(&rows);
    assert!(!kinds.is_empty() && kinds.iter().all(|k| *k == ModelErrorKind::Context), "{kinds:?}");
    assert!(reqs.is_empty(), "nothing is sent past the window: {} requests", reqs.len());
    assert!(retries(&rows).is_empty());
}

#[test]
fn constrained_tool_calls_carry_the_schema_and_run_like_native_calls() {
    let caps = "[capabilities]\ntools = \"constrained\"";
    let (rows, reqs, o) = run_stub("constrained", Proto::OpenAi, script(json!([])), T1, "text", "", caps);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let end = end_of(&rows);
    assert!(end.success);
    let tool_rows = rows.iter().filter(|r| matches!(r, Row::Tool(_))).count() as u64;
    assert!(tool_rows >= 3);
    assert_eq!(end.score.constrained_calls, tool_rows, "each call came as a constrained object");
    assert_eq!(end.score.fallback_protocol, 0);
    for r in &reqs {
        let b = &r["body"];
        assert_eq!(b["response_format"]["type"], "json_schema");
        assert!(b["response_format"]["json_schema"]["schema"]["anyOf"].as_array().unwrap().len() >= 2);
        assert!(b.get("tools").is_none(), "no native tools");
    }
    // The history shows the call and its result as text.
    let last = reqs.last().unwrap()["body"]["messages"].to_string();
    assert!(last.contains("\\\"tool\\\":"), "{last}");
    assert!(last.contains("Tool result for call call_1"));
}

#[test]
fn constrained_form_puts_the_schema_in_llama_cpps_or_ollamas_own_field() {
    for form in ["json_schema", "format"] {
        let caps = format!("[capabilities]\ntools = \"constrained\"\nconstrained_form = \"{form}\"");
        let name = format!("constrained_{form}");
        let (rows, reqs, o) = run_stub(&name, Proto::OpenAi, script(json!([])), T1, "text", "", &caps);
        assert!(o.status.success(), "{form}: {}", String::from_utf8_lossy(&o.stderr));
        let end = end_of(&rows);
        assert!(end.success, "{form}");
        assert!(end.score.constrained_calls >= 3, "{form}: {}", end.score.constrained_calls);
        assert!(!reqs.is_empty());
        for r in &reqs {
            let b = &r["body"];
            assert!(b[form]["anyOf"].as_array().unwrap().len() >= 2, "{form}: the schema itself: {b}");
            assert!(b.get("response_format").is_none(), "{form}: one form only");
        }
    }
}

#[test]
fn constrained_needs_an_openai_compatible_provider() {
    let dir = tmp("constrained_bad");
    let mf = model_file(
        &dir,
        "bad",
        Proto::Anthropic,
        "http://127.0.0.1:9",
        "",
        "[capabilities]\ntools = \"constrained\"",
    );
    let o = harness(&[
        "run",
        "--scenario",
        T1,
        "--model",
        mf.to_str().unwrap(),
        "--mode",
        "text",
        "--out",
        dir.join("runs").to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("capabilities.tools") && err.contains("bad.toml"), "{err}");
}
