//! The scripted planner's rules: every end code of a skill gets an answer.

use super::*;

fn ended(code: &str, skill: &str) -> Value {
    json!({"reason": "skill_ended", "code": code, "skill": skill})
}

fn calls(r: &Reply) -> Vec<(String, Value)> {
    r.tool_calls.iter().map(|c| (c.name.clone(), c.arguments.clone())).collect()
}

#[test]
fn a_stop_it_did_not_ask_for_is_resumed() {
    let mut s = ScriptedSession::new(0.0, &[]);
    s.phase = Phase::Going("F56".into());
    let act = s.on_wake(&ended("stopped", "goto"));
    let r = s.reply(act);
    assert_eq!(calls(&r), vec![("dispatch".to_string(), json!({"skill": "resume"}))]);
    assert_eq!(s.cont, Cont::Dispatch);
    // Waiting (a wait stopped): it looks again; idle: nothing to do.
    s.phase = Phase::Waiting(Box::new(Phase::Going("F56".into())));
    let r = {
        let act = s.on_wake(&ended("stopped", "wait"));
        s.reply(act)
    };
    assert_eq!(calls(&r), vec![("read".to_string(), json!({"what": "mission"}))]);
    s.phase = Phase::Idle;
    let r = {
        let act = s.on_wake(&ended("stopped", "goto"));
        s.reply(act)
    };
    assert!(r.tool_calls.is_empty() && r.stop == Stop::End, "{:?}", r.text);
}

#[test]
fn a_stop_it_asked_for_waits_for_the_way_to_clear() {
    let mut s = ScriptedSession::new(0.0, &[]);
    s.phase = Phase::Going("F56".into());
    let act = s.hold_on(true);
    let r = s.reply(act);
    assert_eq!(r.tool_calls[0].arguments, json!({"skill": "stop"}));
    let act = s.on_wake(&ended("stopped", "goto"));
    let r = s.reply(act);
    assert!(r.tool_calls.is_empty(), "its own stop: no call");
    assert_eq!(r.text, "Stopped; waiting for the way to clear.");
    // The next stopped end is not its own.
    s.phase = Phase::Going("F56".into());
    let act = s.on_wake(&ended("stopped", "goto"));
    assert_eq!(calls(&s.reply(act)), vec![("dispatch".to_string(), json!({"skill": "resume"}))]);
}

#[test]
fn every_end_code_gets_an_answer() {
    for code in ["failed", "blocked", "timeout", "region_exit", "reactive_fault", "stopped"] {
        let mut s = ScriptedSession::new(0.0, &[]);
        s.order = vec!["F56".into()];
        s.phase = Phase::Going("F56".into());
        let act = s.on_wake(&ended(code, "goto"));
        let r = s.reply(act);
        assert!(!r.tool_calls.is_empty(), "{code}: a tool call, not an end ({:?})", r.text);
    }
}

#[test]
fn an_order_is_told_from_a_list() {
    assert!(says_an_order("Scout F52 first, then F53, then F51, in exactly that order."));
    assert!(says_an_order("Scout F51, then F53."));
    assert!(!says_an_order("Scout F51, F53 and F55, then come home."));
    assert!(!says_an_order("Scout F53 and come home."));
}
