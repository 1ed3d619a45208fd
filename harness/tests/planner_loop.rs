//! The planner loop with a programmable planner: every wake reason, every limit's end code and
//! the recovery interface. The world, the tools, the writer and the run folder are all real.

mod common;
mod support;

use serde_json::{json, Value};

use acres_harness::planners::{Block, ModelError, ModelErrorKind};
use acres_harness::runfolder::rows::{EndCode, Mode, Profile, Row};

use common::*;

#[test]
fn a_plain_mission_ends_done_and_charges_the_thinking_time() {
    let r = run_with("plain", json!({}), Mode::Text, Profile::Vehicle, driver());
    assert_eq!(r.outcome.end, EndCode::Done);
    assert!(r.outcome.success);
    assert_eq!(r.wakes(), ["start", "skill_ended", "skill_ended", "skill_ended"]);
    // Four wake-ups with one 1 s call each that dispatches and one that ends the turn: the
    // first skill starts 1 s after the start (the call's latency is charged before it acts).
    let first = r.rows.iter().find_map(|row| match row {
        Row::Event(e) if e.name == "skill_started" => Some(e.t),
        _ => None,
    });
    assert!((first.unwrap() - 1.05).abs() < 1e-6, "first skill at {first:?}");
    assert!((r.end().score.charged_s - 7.0).abs() < 1e-9, "charged {}", r.end().score.charged_s);
}

#[test]
fn the_world_does_not_wait_for_a_slow_planner() {
    // A 30 s think while a goto runs: the vehicle moves meanwhile.
    let mut first = true;
    let brain: Brain = Box::new(move |_, blocks| {
        if first {
            first = false;
            return Ok(reply(
                vec![("dispatch", json!({"skill": "goto", "arguments": {"field": "F55"}}))],
                0.0,
            ));
        }
        if !results(blocks).is_empty() {
            return Ok(reply(vec![("read", json!({"what": "vehicle"}))], 30.0));
        }
        Ok(end_turn())
    });
    let r = run_with("slow", json!({"limits": {"sim_s": 200}}), Mode::Text, Profile::Vehicle, brain);
    let (_, v, _) = r.tools().into_iter().find(|(n, _, _)| n == "read").unwrap();
    assert!(v["x"].as_f64().unwrap() > 40.0, "the vehicle drove during the 30 s call: {v}");
}

#[test]
fn timer_wakes_come_from_wait_during_a_skill_and_from_wake_every_s() {
    let mut n = 0;
    let brain: Brain = Box::new(move |_, blocks| {
        n += 1;
        match (n, wake_reason(blocks).as_deref()) {
            (1, _) => Ok(reply(
                vec![
                    ("dispatch", json!({"skill": "goto", "arguments": {"field": "F55"}})),
                    ("dispatch", json!({"skill": "wait", "arguments": {"seconds": 15}})),
                ],
                0.5,
            )),
            _ => Ok(end_turn()),
        }
    });
    let r = run_with(
        "timer",
        json!({"limits": {"wake_every_s": 100, "sim_s": 250}}),
        Mode::Text,
        Profile::Vehicle,
        brain,
    );
    // The wait timer at 15.5 s, the period at 100 s, then the goto ends (about 190 s) and the
    // run ends: a period does not keep a finished run alive.
    assert_eq!(r.wakes(), ["start", "timer", "timer", "skill_ended"]);
    let timers: Vec<(f64, String)> = r
        .rows
        .iter()
        .filter_map(|row| match row {
            Row::Wake(w) if w.reason.as_str() == "timer" => Some((w.t, w.message.clone())),
            _ => None,
        })
        .collect();
    assert!((timers[0].0 - 15.5).abs() < 0.06 && timers[0].1.contains("timer_at_s"), "{timers:?}");
    assert!((timers[1].0 - 100.0).abs() < 0.06 && timers[1].1.contains("period_s"), "{timers:?}");
    let (_, res, _) = &r.tools()[1];
    assert_eq!(res["timer"], true);
}

#[test]
fn requests_wake_the_planner_and_ask_operator_answers() {
    let mut n = 0;
    let brain: Brain = Box::new(move |_, blocks| {
        n += 1;
        if wake_reason(blocks).as_deref() == Some("request") {
            return Ok(reply(vec![("ask_operator", json!({"question": "Which field first?"}))], 1.0));
        }
        let _ = n;
        Ok(end_turn())
    });
    let extra = json!({"events": [{"t": 30, "type": "request", "text": "Come home."}], "operator": {"answer": "F51 first."}});
    let r = run_with("request", extra, Mode::Text, Profile::Vehicle, brain);
    assert_eq!(r.wakes(), ["start", "request"]);
    let (_, res, _) = &r.tools()[0];
    assert_eq!(res["answer"], "F51 first.");
    assert_eq!(r.end().score.interventions, 1);
    assert!(r
        .rows
        .iter()
        .any(|row| matches!(row, Row::Request(q) if q.text == "Come home." && (q.t - 30.0).abs() < 0.06)));
}

fn truck_on_goto(at_m: f64, remove_after_s: Option<f64>) -> Value {
    let mut events = vec![
        json!({"t": 0, "type": "object_add", "object": {"id": 1, "kind": "truck", "place": {"route_to": "F55", "leg": "goto", "at_m": at_m, "across": true}}}),
    ];
    if let Some(d) = remove_after_s {
        events.push(json!({"after_seen": 1, "delay_s": d, "type": "object_remove", "id": 1}));
    }
    Value::Array(events)
}

fn go_f55_and_listen() -> Brain {
    let mut first = true;
    Box::new(move |_, _| {
        if first {
            first = false;
            return Ok(reply(
                vec![("dispatch", json!({"skill": "goto", "arguments": {"field": "F55"}}))],
                0.5,
            ));
        }
        Ok(end_turn())
    })
}

#[test]
fn returns_on_route_wakes_in_the_vehicle_profile_and_object_seen_in_the_simulator_profile() {
    let extra = json!({"events": truck_on_goto(300.0, Some(60.0)), "fields": ["F55"], "success": {"scouted": ["F55"]}, "limits": {"sim_s": 400}});
    let r = run_with("ror", extra.clone(), Mode::Text, Profile::Vehicle, go_f55_and_listen());
    assert!(r.wakes().contains(&"returns_on_route".to_string()), "{:?}", r.wakes());
    assert!(!r.wakes().contains(&"object_seen".to_string()));
    assert!(r.rows.iter().any(|row| matches!(row, Row::ReturnsOnRoute(x) if !x.cells.is_empty())));
    let r = run_with("seen", extra, Mode::Text, Profile::Simulator, go_f55_and_listen());
    assert!(r.wakes().contains(&"object_seen".to_string()), "{:?}", r.wakes());
    assert!(!r.wakes().contains(&"returns_on_route".to_string()));
}

#[test]
fn stuck_wakes_in_menu_recovery_then_the_classical_rules_decide() {
    let extra = json!({
        "events": truck_on_goto(300.0, None), "fields": ["F55"], "success": {"scouted": ["F55"]},
        "recovery": {"mode": "menu", "hold_s": 5}, "limits": {"stuck_wake_ups": 1, "sim_s": 300},
        "server": {"blocked_s": 40}
    });
    let mut n = 0;
    let brain: Brain = Box::new(move |_, blocks| {
        n += 1;
        match wake_reason(blocks).as_deref() {
            Some("start") => {
                Ok(reply(vec![("dispatch", json!({"skill": "goto", "arguments": {"field": "F55"}}))], 0.5))
            }
            // Choose "wait" on the first stuck wake-up; after a blocked end, resume (held again).
            Some("skill_ended") if n < 6 => Ok(reply(vec![("dispatch", json!({"skill": "resume"}))], 0.5)),
            _ => Ok(end_turn()),
        }
    });
    let r = run_with("stuck", extra, Mode::Text, Profile::Vehicle, brain);
    let wakes = r.wakes();
    assert_eq!(
        wakes.iter().filter(|w| *w == "stuck").count(),
        1,
        "one stuck wake-up, then the rules: {wakes:?}"
    );
    let stuck = r.rows.iter().find_map(|row| match row {
        Row::Wake(w) if w.reason.as_str() == "stuck" => Some(w.message.clone()),
        _ => None,
    });
    assert!(stuck.unwrap().contains("stop_and_wait"), "the menu lists the options");
    assert!(r.rows.iter().any(|row| matches!(row, Row::Event(e) if e.name == "classical_rule" && e.cause.as_deref().unwrap_or("").contains("stuck_wake_ups"))));
    assert!(r.end().score.codes.get(&acres_vehicle::ResultCode::Blocked).copied().unwrap_or(0) >= 1);
}

#[test]
fn model_errors_end_the_wake_then_wake_the_planner_and_end_the_run_after_three_in_a_row() {
    // Two failed calls: each ends its wake-up; with no skill running, a model_error wake-up comes
    // 30 s later (the world is held during a failed call, so nothing else is charged).
    let brain: Brain = Box::new(|n, _| {
        if n <= 2 {
            return Err(ModelError::new(ModelErrorKind::NoReply, "connection refused"));
        }
        Ok(end_turn())
    });
    let r = run_with("errors", json!({"limits": {"model_errors": 3}}), Mode::Text, Profile::Vehicle, brain);
    assert_eq!(r.wakes(), ["start", "model_error", "model_error"]);
    assert_eq!(r.end().score.model_errors, 2);
    let times: Vec<f64> = r
        .rows
        .iter()
        .filter_map(|row| match row {
            Row::Wake(w) => Some(w.t),
            _ => None,
        })
        .collect();
    assert!((times[1] - 30.0).abs() < 0.06 && (times[2] - 60.0).abs() < 0.06, "{times:?}");
    assert_eq!(r.outcome.end, EndCode::Done);
    // A service that never answers: the run ends model_error after three failed calls in a row.
    let r = run_with(
        "errors_end",
        json!({"limits": {"model_errors": 3}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|_, _| Err(ModelError::new(ModelErrorKind::NoReply, "HTTP 500"))),
    );
    assert_eq!(r.outcome.end, EndCode::ModelError);
    assert_eq!(r.end().score.model_errors, 3);
    assert_eq!(r.wakes().len(), 3);
}

#[test]
fn every_limit_ends_the_run_with_its_code() {
    // limit_wake_ups: a planner that always waits again.
    let r = run_with(
        "wakes",
        json!({"limits": {"wake_ups": 3}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|_, blocks| {
            Ok(if wake_reason(blocks).is_some() {
                reply(vec![("dispatch", json!({"skill": "wait", "arguments": {"seconds": 10}}))], 0.1)
            } else {
                end_turn()
            })
        }),
    );
    assert_eq!(r.outcome.end, EndCode::LimitWakeUps);
    assert_eq!(r.end().score.wake_ups, 3);
    // limit_tool_calls.
    let r = run_with(
        "calls",
        json!({"limits": {"tool_calls": 5}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|_, _| Ok(reply(vec![("read", json!({"what": "budget"}))], 0.1))),
    );
    assert_eq!(r.outcome.end, EndCode::LimitToolCalls);
    assert_eq!(r.end().score.tool_calls, 5, "the refused call is not counted");
    // limit_sim_time.
    let r = run_with("sim", json!({"limits": {"sim_s": 20}}), Mode::Text, Profile::Vehicle, driver());
    assert_eq!(r.outcome.end, EndCode::LimitSimTime);
    assert!((r.outcome.t_s - 20.0).abs() < 0.06);
    // limit_wall_time: a wall budget shorter than one step of pacing.
    let mut extra = json!({"limits": {"wall_s": 0.01}});
    extra["limits"]["sim_s"] = json!(3600);
    let r = run_with(
        "wall",
        extra,
        Mode::Text,
        Profile::Vehicle,
        Box::new(|_, _| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            Ok(reply(vec![("dispatch", json!({"skill": "wait", "arguments": {"seconds": 100}}))], 0.1))
        }),
    );
    assert_eq!(r.outcome.end, EndCode::LimitWallTime);
    // budget: tokens.
    let r = run_with(
        "tokens",
        json!({"limits": {"tokens": 100}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|_, _| {
            let mut rep = reply(vec![("read", json!({"what": "notes"}))], 0.1);
            rep.usage.output_tokens = 60;
            Ok(rep)
        }),
    );
    assert_eq!(r.outcome.end, EndCode::Budget);
    assert_eq!(
        r.end().score.tokens,
        60,
        "the second call (60 more) could pass the cap of 100: it is not made"
    );
    // budget: usd (the test session prices 1e-3 USD per output token): 0.03 a call, cap 0.05.
    let r = run_with(
        "usd",
        json!({"limits": {"usd": 0.05}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|_, _| {
            let mut rep = reply(vec![("read", json!({"what": "notes"}))], 0.1);
            rep.usage.output_tokens = 30;
            Ok(rep)
        }),
    );
    assert_eq!(r.outcome.end, EndCode::Budget);
    // limit_stalled: a vehicle that waits.
    let r = run_with(
        "stall",
        json!({"limits": {"stall_s": 60}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|n, _| {
            Ok(if n == 1 {
                reply(vec![("dispatch", json!({"skill": "wait", "arguments": {"seconds": 500}}))], 0.1)
            } else {
                end_turn()
            })
        }),
    );
    assert_eq!(r.outcome.end, EndCode::LimitStalled);
    assert!((r.outcome.t_s - 60.0).abs() < 0.1, "stalled at {}", r.outcome.t_s);
}

#[test]
fn call_s_and_wake_s_end_the_wake_up() {
    // A call over call_s: charged call_s only (the time that passed), counted as a model error,
    // its tool calls do not act, and the wake-up ends.
    let r = run_with(
        "call_s",
        json!({"limits": {"call_s": 5, "wake_ups": 1}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|n, _| {
            Ok(if n == 1 { reply(vec![("read", json!({"what": "notes"}))], 12.0) } else { end_turn() })
        }),
    );
    assert_eq!(r.end().score.model_errors, 1);
    assert!((r.end().score.charged_s - 5.0).abs() < 1e-9);
    assert!(r.tools().is_empty(), "the late reply's tool calls do not act");
    // Calls of 4 s with wake_s 10: the third is cut at 10 s (2 s charged) and does not act.
    let r = run_with(
        "wake_s",
        json!({"limits": {"wake_s": 10, "wake_ups": 1}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|_, _| Ok(reply(vec![("read", json!({"what": "notes"}))], 4.0))),
    );
    assert_eq!(r.tools().len(), 2);
    assert!((r.end().score.charged_s - 10.0).abs() < 1e-9, "charged {}", r.end().score.charged_s);
    assert_eq!(r.end().score.model_errors, 1);
}

#[test]
fn tool_calls_per_wake_and_reminders() {
    let r = run_with(
        "per_wake",
        json!({"limits": {"tool_calls_per_wake": 3}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|n, _| {
            Ok(if n == 1 {
                reply((0..5).map(|_| ("read", json!({"what": "notes"}))).collect(), 0.1)
            } else {
                end_turn()
            })
        }),
    );
    let tools = r.tools();
    assert_eq!(tools.len(), 5);
    assert!(tools[..3].iter().all(|t| !t.2));
    assert!(tools[3..]
        .iter()
        .all(|t| t.2 && t.1["error"].as_str().unwrap().contains("limit of 3 tool calls")));
    // An empty reply gets a reminder; after `reminders` of them the wake-up ends: the third empty
    // reply ends it without a reminder, and a reminder is counted when it is sent (D108), so the
    // score's count equals the `model_send` rows marked `reminder`.
    let r = run_with(
        "reminders",
        json!({"limits": {"reminders": 2}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|_, _| {
            let mut rep = end_turn();
            rep.text = String::new();
            Ok(rep)
        }),
    );
    let sent = r.rows.iter().filter(|row| matches!(row, Row::ModelSend(s) if s.reminder)).count();
    assert_eq!(sent, 2, "reminders sent");
    assert_eq!(r.end().score.reminders, 2);
    assert_eq!(r.outcome.end, EndCode::Done);
}

#[test]
fn a_place_that_went_out_and_came_back_wakes_the_planner_again() {
    let truck = |id: u32| json!({"route_to": "F55", "leg": "goto", "at_m": 300, "across": true, "id": id});
    let add = |t: f64, id: u32| {
        let mut p = truck(id);
        p.as_object_mut().unwrap().remove("id");
        json!({"t": t, "type": "object_add", "object": {"id": id, "kind": "truck", "place": p}})
    };
    let events = json!([add(0.0, 1), {"after_seen": 1, "delay_s": 20, "type": "object_remove", "id": 1}, add(110.0, 2)]);
    let extra = json!({"events": events, "fields": ["F55"], "success": {"scouted": ["F55"]}, "limits": {"sim_s": 140}});
    let brain: Brain = Box::new(|_, blocks| {
        Ok(match wake_reason(blocks).as_deref() {
            Some("start") => {
                reply(vec![("dispatch", json!({"skill": "goto", "arguments": {"field": "F55"}}))], 0.5)
            }
            Some("returns_on_route") => reply(
                vec![
                    ("dispatch", json!({"skill": "stop"})),
                    ("dispatch", json!({"skill": "wait", "arguments": {"seconds": 50}})),
                ],
                0.5,
            ),
            Some("skill_ended") if results(blocks).is_empty() => {
                // Resume after the wait (the stop's own end is answered with nothing).
                let text = blocks.iter().find_map(|b| match b {
                    Block::Text(t) => Some(t.clone()),
                    _ => None,
                });
                if text.unwrap_or_default().contains("\"skill\":\"wait\"") {
                    reply(vec![("dispatch", json!({"skill": "resume"}))], 0.5)
                } else {
                    end_turn()
                }
            }
            _ => end_turn(),
        })
    });
    let r = run_with("again", extra, Mode::Text, Profile::Vehicle, brain);
    let ror: Vec<f64> = r
        .rows
        .iter()
        .filter_map(|row| match row {
            Row::Wake(w) if w.reason.as_str() == "returns_on_route" => Some(w.t),
            _ => None,
        })
        .collect();
    assert_eq!(ror.len(), 2, "one wake-up per truck: {ror:?}");
    assert!(ror[1] >= 110.0, "{ror:?}");
}
