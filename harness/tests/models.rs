//! The model clients end to end, through the stub model server as a real process on
//! 127.0.0.1: one test per fault kind, each asserting the exact counts in the score, the rows of
//! `run.jsonl` and the time charged on the mission clock.

mod common;
mod support;

use serde_json::{json, Value};

use acres_harness::runfolder::rows::{EndCode, ModelErrorKind, ReasoningLogged, Row};
use common::stub::*;

const T1: &str = "scenarios/t1_01_one_field.json";

fn retries(rows: &[Row]) -> Vec<(u32, f64, String)> {
    rows.iter()
        .filter_map(|r| match r {
            Row::ModelRetry(m) => Some((m.try_n, m.wait_s, m.cause.clone())),
            _ => None,
        })
        .collect()
}

fn errors(rows: &[Row]) -> Vec<(ModelErrorKind, f64, String)> {
    rows.iter()
        .filter_map(|r| match r {
            Row::ModelError(m) => Some((m.kind, m.latency_s, m.error.clone())),
            _ => None,
        })
        .collect()
}

/// The charged time equals the answering tries' latencies (and cut limits), nothing else; and
/// the mission clock moved by exactly that much across each call.
fn assert_charged_exactly(rows: &[Row]) {
    let end = end_of(rows);
    let want = expected_charge_s(rows);
    assert!((end.score.charged_s - want).abs() < 1e-6, "charged {} != {want}", end.score.charged_s);
    let mut send_t = None;
    for r in rows {
        match r {
            Row::ModelSend(s) => send_t = Some(s.t),
            Row::ModelRetry(m) => assert_eq!(Some(m.t), send_t, "the world is held during a new try"),
            Row::ModelReply(m) => {
                let dt = 0.05;
                let charged = (m.latency_s / dt).round() * dt;
                let moved = m.t - send_t.expect("a send before the reply");
                assert!(
                    (moved - charged).abs() < 1e-6,
                    "call {}: the clock moved {moved}, charged {charged}",
                    m.call
                );
            }
            _ => {}
        }
    }
}

#[test]
fn retried_statuses_wait_by_the_formula_or_the_longer_retry_after_and_charge_only_the_answer() {
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        let turns = json!([
            {"fault": "status", "status": 429},
            {"fault": "status", "status": 429, "retry_after_s": 0.4},
            {"fault": "status", "status": 503, "times": 2},
            {"fault": "status", "status": 500},
            {"fault": "status", "status": 408},
        ]);
        let (rows, reqs, o) =
            run_stub(&format!("status_{proto:?}"), proto, script(turns), T1, "text", "", "");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let want = vec![
            (2, 0.1, "429".to_string()),
            (2, 0.4, "429".to_string()),
            (2, 0.1, "status 503".to_string()),
            (3, 0.2, "status 503".to_string()),
            (2, 0.1, "status 500".to_string()),
            (2, 0.1, "status 408".to_string()),
        ];
        assert_eq!(retries(&rows), want, "{proto:?}");
        let end = end_of(&rows);
        assert_eq!(end.score.model_errors, 0);
        assert_eq!(end.end, EndCode::Done);
        assert!(end.success);
        // Every try reached the server: the calls plus the six failed tries.
        let calls = rows.iter().filter(|r| matches!(r, Row::ModelSend(_))).count();
        assert_eq!(reqs.len(), calls + 6);
        // The same request body is sent again on each new try.
        assert_eq!(reqs[0]["body"], reqs[1]["body"]);
        assert_charged_exactly(&rows);
        // The waits are real: the retried call's reply comes after them in wall time.
        let walls: Vec<f64> = rows
            .iter()
            .filter_map(|r| match r {
                Row::ModelSend(s) if s.call == 2 => Some(s.wall),
                Row::ModelReply(m) if m.call == 2 => Some(m.wall),
                _ => None,
            })
            .collect();
        assert!(walls[1] - walls[0] >= 0.4, "{walls:?}");
    }
}

#[test]
fn a_service_that_keeps_failing_gives_a_model_error_after_the_tries() {
    // Ten 503s: two calls give up after their four tries, the third answers at its third try.
    let turns = json!([{"fault": "status", "status": 503, "times": 10}]);
    let (rows, reqs, _) =
        run_stub("tries", Proto::OpenAi, json!({"then": "done", "turns": turns}), T1, "text", "", "");
    assert_eq!(retries(&rows).iter().map(|r| r.0).collect::<Vec<_>>(), [2, 3, 4, 2, 3, 4, 2, 3]);
    let waits: Vec<f64> = retries(&rows).iter().map(|r| r.1).collect();
    assert_eq!(waits, [0.1, 0.2, 0.4, 0.1, 0.2, 0.4, 0.1, 0.2]);
    let errs = errors(&rows);
    assert_eq!(errs.len(), 2);
    for e in &errs {
        assert_eq!(e.0, ModelErrorKind::NoReply);
        assert_eq!(e.1, 0.0, "nothing charged for a call without a reply");
        assert!(e.2.starts_with("no reply after 4 tries: status 503"), "{}", e.2);
    }
    assert_eq!(reqs.len(), 11);
    let end = end_of(&rows);
    assert_eq!(end.score.model_errors, 2);
    assert_eq!(end.end, EndCode::Done);
    assert_charged_exactly(&rows);
}

#[test]
fn a_reply_past_the_call_limit_is_cut_and_the_limit_is_charged() {
    // The model file's call limit applies (the scenario sets none): 1 s.
    let turns = json!([{"fault": "delay", "delay_s": 3.0}]);
    let (rows, _, o) =
        run_stub("delay", Proto::Anthropic, script(turns), T1, "text", "call_timeout_s = 1.0", "");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let Row::Run(run) = &rows[0] else { panic!("no run row") };
    assert_eq!(run.limits.call_s, 1.0);
    let errs = errors(&rows);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].0, ModelErrorKind::TimeLimit);
    assert_eq!(errs[0].1, 1.0);
    assert!(retries(&rows).is_empty(), "a call cut at its limit is not tried again");
    let end = end_of(&rows);
    assert_eq!(end.score.model_errors, 1);
    assert_charged_exactly(&rows);
    // The next wake-up is the model_error one, 30 s after the cut (no skill ran).
    let wakes: Vec<(String, f64)> = rows
        .iter()
        .filter_map(|r| match r {
            Row::Wake(w) => Some((w.reason.as_str().to_string(), w.t)),
            _ => None,
        })
        .collect();
    assert_eq!(wakes[1].0, "model_error");
    assert!((wakes[1].1 - 31.0).abs() < 1e-6, "{wakes:?}");
    assert!(end.success);
}

#[test]
fn a_dropped_connection_is_tried_again_and_a_malformed_reply_is_a_model_error() {
    let turns = json!([{"fault": "drop"}, {"fault": "malformed"}]);
    let (rows, _, _) = run_stub("drop", Proto::OpenAi, script(turns), T1, "text", "", "");
    assert_eq!(retries(&rows), vec![(2, 0.1, "connection".to_string())]);
    let errs = errors(&rows);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].0, ModelErrorKind::NoReply);
    assert!(errs[0].2.starts_with("malformed reply: the reply is not JSON"), "{}", errs[0].2);
    let end = end_of(&rows);
    assert_eq!(end.score.model_errors, 1);
    assert!(end.success, "the planner recovers at its model_error wake-up");
    assert_charged_exactly(&rows);
}

#[test]
fn a_tool_call_written_as_text_is_read_and_counted() {
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        let turns = json!([
            {"content": "Let me look.\n<tool_call>{\"name\": \"read\", \"arguments\": {\"what\": \"vehicle\"}}</tool_call>"},
            {"content": "```json\n{\"name\": \"read\", \"arguments\": {\"what\": \"budget\"}}\n```"},
        ]);
        let (rows, reqs, _) = run_stub(&format!("text_{proto:?}"), proto, script(turns), T1, "text", "", "");
        let end = end_of(&rows);
        assert_eq!(end.score.fallback_protocol, 2, "{proto:?}");
        assert!(end.success);
        let tools: Vec<(String, Value)> = rows
            .iter()
            .filter_map(|r| match r {
                Row::Tool(t) => Some((t.name.clone(), t.arguments.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(tools[0], ("read".to_string(), json!({"what": "vehicle"})));
        assert_eq!(tools[1], ("read".to_string(), json!({"what": "budget"})));
        // The result of a call read from text goes back as text, not as a tool result.
        let second = reqs[1]["body"].to_string();
        assert!(second.contains("Tool result for call text_1:"), "{proto:?}: {second}");
    }
}

#[test]
fn unknown_tools_and_arguments_against_the_schema_are_schema_errors() {
    let turns = json!([
        {"tool_calls": [{"name": "teleport", "arguments": {"to": "F53"}}]},
        {"tool_calls": [{"name": "dispatch", "arguments": {"skill": "fly"}}]},
    ]);
    let (rows, _, _) = run_stub("schema", Proto::Anthropic, script(turns), T1, "text", "", "");
    let end = end_of(&rows);
    assert_eq!(end.score.schema_errors, 2);
    let errs: Vec<bool> = rows
        .iter()
        .filter_map(|r| match r {
            Row::Tool(t) => Some(t.error),
            _ => None,
        })
        .take(2)
        .collect();
    assert_eq!(errs, [true, true]);
    assert!(end.success);
}

#[test]
fn each_reply_without_a_call_gets_the_reminder_that_says_what_happened() {
    use acres_harness::run::{REMINDER, REMINDER_CUT, REMINDER_NO_CALL};
    let sent = |rows: &[Row]| -> Vec<String> {
        rows.iter()
            .filter_map(|r| match r {
                Row::ModelSend(s) => s.blocks.iter().find_map(|b| {
                    b.text
                        .clone()
                        .filter(|t| [REMINDER, REMINDER_CUT, REMINDER_NO_CALL].contains(&t.as_str()))
                }),
                _ => None,
            })
            .collect()
    };
    // Two reminders a wake-up at most (the default limit): two runs.
    let turns = json!([{"content": "I will now", "stop": "max_tokens"}, {"empty": true}]);
    let (rows, _, _) = run_stub("remind", Proto::OpenAi, script(turns), T1, "text", "", "");
    assert_eq!(end_of(&rows).score.reminders, 2);
    // The cut reply had text: its reminder says it was cut, not that it was empty.
    assert_eq!(sent(&rows), [REMINDER_CUT, REMINDER]);
    assert!(end_of(&rows).success);
    let turns = json!([{"content": "I call dispatch for F53 now.", "stop": "tool_use"}]);
    let (rows, _, _) = run_stub("remind_nocall", Proto::OpenAi, script(turns), T1, "text", "", "");
    assert_eq!(end_of(&rows).score.reminders, 1);
    assert_eq!(sent(&rows), [REMINDER_NO_CALL]);
    assert!(end_of(&rows).success);
}

#[test]
fn reasoning_is_logged_apart_and_never_taken_as_the_answer() {
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        let turns = json!([{"reasoning": "F51 is far; go anyway.", "tool_calls": [{"name": "read", "arguments": {"what": "vehicle"}}]}]);
        let (rows, _, _) = run_stub(&format!("reason_{proto:?}"), proto, script(turns), T1, "text", "", "");
        let first = rows
            .iter()
            .find_map(|r| match r {
                Row::ModelReply(m) => Some(m.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(first.reasoning.as_deref(), Some("F51 is far; go anyway."));
        assert!(!first.text.contains("far"), "{proto:?}: reasoning leaked into the answer");
        let end = end_of(&rows);
        assert_eq!(end.score.reasoning_logged, ReasoningLogged::Present);
        assert!(end.success);
    }
    // Without reasoning: not offered.
    let (rows, _, _) = run_stub("reason_none", Proto::OpenAi, script(json!([])), T1, "text", "", "");
    assert_eq!(end_of(&rows).score.reasoning_logged, ReasoningLogged::NotOffered);
}

#[test]
fn a_server_that_refuses_pictures_gets_text_instead_from_then_on() {
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        let turns = json!([{"fault": "refuse_pictures"}]);
        let (rows, reqs, _) =
            run_stub(&format!("pics_{proto:?}"), proto, script(turns), T1, "visual", "", "");
        let end = end_of(&rows);
        assert_eq!(retries(&rows), vec![(2, 0.0, "pictures refused".to_string())], "{proto:?}");
        // Every picture of the run became a line of text: the refused one, and each one after.
        let frames = rows.iter().filter(|r| matches!(r, Row::Frame(_))).count() as u64;
        assert_eq!(end.score.pictures_dropped, frames, "{proto:?}");
        let with_pictures = reqs.iter().filter(|r| r["body"].to_string().contains("base64")).count();
        assert_eq!(with_pictures, 1, "{proto:?}: only the refused request carried a picture");
        assert!(reqs[1]["body"].to_string().contains("left out: the server refused pictures"));
        assert!(end.success);
    }
}

#[test]
fn picture_limits_and_keep_pictures_replace_pictures_with_a_line() {
    // image_max_px below the 692 px side: every picture is text.
    let (rows, reqs, _) =
        run_stub("maxpx", Proto::OpenAi, script(json!([])), T1, "visual", "image_max_px = 512", "");
    let frames = rows.iter().filter(|r| matches!(r, Row::Frame(_))).count() as u64;
    assert!(frames >= 3);
    assert_eq!(end_of(&rows).score.pictures_dropped, frames);
    assert!(!reqs.iter().any(|r| r["body"].to_string().contains("base64")));
    // keep_pictures = 1: the history holds one picture; each older one becomes text once.
    let (rows, reqs, _) =
        run_stub("keep", Proto::Anthropic, script(json!([])), T1, "visual", "keep_pictures = 1", "");
    let frames = rows.iter().filter(|r| matches!(r, Row::Frame(_))).count() as u64;
    assert_eq!(end_of(&rows).score.pictures_dropped, frames - 1);
    for r in &reqs {
        assert!(r["body"].to_string().matches("\"type\":\"image\"").count() <= 1);
    }
}

#[test]
fn calls_per_run_ends_the_run_and_budgets_stop_before_the_call_that_could_pass_them() {
    let (rows, _, _) =
        run_stub("perrun", Proto::OpenAi, script(json!([])), T1, "text", "", "[limits]\ncalls_per_run = 2");
    assert_eq!(end_of(&rows).end, EndCode::LimitModelCalls);
    assert_eq!(rows.iter().filter(|r| matches!(r, Row::ModelSend(_))).count(), 2);
    // Tokens: each reply reports 1000 in, 100 out; a full reply is 200 tokens.
    let turns: Vec<Value> = (0..20)
        .map(|_| json!({"tool_calls": [{"name": "read", "arguments": {"what": "vehicle"}}], "usage": {"input": 1000, "output": 100}}))
        .collect();
    let (_dir, sc) = budget_scenario(json!({"tokens": 5000}));
    let (rows, _, _) = run_stub(
        "tokens",
        Proto::Anthropic,
        script(json!(turns)),
        &sc,
        "text",
        "max_output_tokens = 200",
        "",
    );
    let end = end_of(&rows);
    assert_eq!(end.end, EndCode::Budget);
    assert!(end.score.tokens <= 5000, "{}", end.score.tokens);
    assert_eq!(end.score.tokens, 1100 * 4, "four calls fit, the fifth could pass the cap");
    let sends = rows.iter().filter(|r| matches!(r, Row::ModelSend(_))).count();
    let replies = rows.iter().filter(|r| matches!(r, Row::ModelReply(_))).count();
    assert_eq!(sends, replies, "no call is made after the stop");
    // USD: 1000 in at 1 USD/M and 100 out at 4 USD/M = 0.0014 a call.
    let (_dir2, sc) = budget_scenario(json!({"usd": 0.005}));
    let (rows, _, _) =
        run_stub("usd", Proto::OpenAi, script(json!(turns)), &sc, "text", "max_output_tokens = 200", "");
    let end = end_of(&rows);
    assert_eq!(end.end, EndCode::Budget);
    assert!(end.score.usd <= 0.005);
    assert_eq!(rows.iter().filter(|r| matches!(r, Row::ModelReply(_))).count(), 3);
}

fn budget_scenario(limits: Value) -> (Tmp, String) {
    let root = common::root();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(root.join(T1)).unwrap()).unwrap();
    v["id"] = json!(format!("budget_{}", limits.as_object().unwrap().keys().next().unwrap()));
    v["limits"] = limits;
    let dir = tmp(&format!("sc_{}", v["id"].as_str().unwrap()));
    std::fs::create_dir_all(dir.join("maps")).unwrap();
    std::fs::copy(root.join("scenarios/maps/default.json"), dir.join("maps/default.json")).unwrap();
    let f = dir.join("scenario.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let f = f.display().to_string();
    (dir, f)
}

#[test]
fn the_stub_streams_openai_completions_as_server_sent_events() {
    let dir = tmp("stream");
    let stub = StubProc::start(
        &dir,
        json!({"then": "done", "turns": [{"content": "Going.", "tool_calls": [{"name": "read", "arguments": {"what": "vehicle"}}]}]}),
    );
    let body = json!({"model": "stub-model", "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        "tools": [{"type": "function", "function": {"name": "read", "parameters": {}}}]});
    let url = format!("{}/v1/chat/completions", stub.url);
    let a = acres_harness::planners::models::http::send(
        reqwest::Method::POST,
        &url,
        &[],
        Some(body.to_string().into_bytes()),
        5.0,
    )
    .expect("the stub answers");
    let text = String::from_utf8(a.body).unwrap();
    let events: Vec<Value> = text
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(text.trim_end().ends_with("data: [DONE]"));
    assert_eq!(events[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(events.iter().any(|e| e["choices"][0]["delta"]["content"] == "Going."));
    let call = events.iter().find_map(|e| e["choices"][0]["delta"]["tool_calls"].get(0).cloned()).unwrap();
    assert_eq!(call["function"]["name"], "read");
    assert_eq!(call["function"]["arguments"], "{\"what\":\"vehicle\"}");
    assert!(events.iter().any(|e| e["choices"][0]["finish_reason"] == "tool_calls"));
    assert!(events.last().unwrap()["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
}
