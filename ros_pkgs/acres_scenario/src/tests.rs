//! Unit tests of the scenario format: defaults, the shipped scenarios, round trips, and the
//! wording of errors. The broken-file corpus is `harness/tests/scenario_corpus.rs`.

use std::path::{Path, PathBuf};

use super::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn maps() -> PathBuf {
    repo().join("scenarios/maps")
}

const MINIMAL: &str = r#"{"schema": "acres-harness-scenario-1", "id": "m", "tier": 1, "title": "M",
  "instruction": "Scout F53.", "fields": ["F53"], "success": {"scouted": ["F53"]}}"#;

fn parse_str(text: &str) -> Result<Scenario, ScenarioError> {
    parse(text, Path::new("x.json"), &maps())
}

/// The error line of `MINIMAL` with one key replaced (or added when `key` is new).
fn error_with(key: &str, value: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(MINIMAL).unwrap();
    v[key] = serde_json::from_str(value).unwrap();
    match parse_str(&v.to_string()) {
        Ok(_) => panic!("{key} = {value} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn minimal_scenario_gets_every_default() {
    let s = parse_str(MINIMAL).unwrap();
    assert_eq!(s.map, "default");
    assert_eq!(s.start, Start::Home);
    assert_eq!(s.condition, Condition::Dry);
    assert_eq!((s.deadline_s, s.fuel_limit_mj), (None, None));
    assert!(s.events.is_empty() && s.skills.is_empty() && s.operator.is_none());
    assert_eq!(s.local_planner, "default");
    assert_eq!(s.server, ServerOptions { blocked_s: 60.0 });
    assert_eq!(s.recovery, Recovery { mode: RecoveryMode::Off, hold_s: 10.0 });
    let l = &s.limits;
    assert_eq!((l.wake_ups, l.tool_calls, l.tool_calls_per_wake), (40, 240, 12));
    assert_eq!((l.sim_s, l.wall_s, l.usd, l.tokens), (3600.0, 3600.0, 2.0, 600_000));
    assert_eq!((l.reminders, l.model_errors, l.call_s, l.wake_s), (2, 3, 30.0, 90.0));
    assert_eq!((l.stall_s, l.stuck_wake_ups, l.wake_every_s), (None, 10, None));
    assert_eq!(s.start_pose(), Pose { x: 0.0, y: 0.0, yaw: s.map_data.home_yaw_rad });
    assert_eq!(s.file, Path::new("x.json"));
}

#[test]
fn limits_override_only_the_keys_given() {
    let mut v: serde_json::Value = serde_json::from_str(MINIMAL).unwrap();
    v["limits"] = serde_json::json!({"wake_ups": 5, "stall_s": 120});
    let s = parse_str(&v.to_string()).unwrap();
    assert_eq!(s.limits, Limits { wake_ups: 5, stall_s: Some(120.0), ..Limits::default() });
}

#[test]
fn shipped_scenarios_load_and_round_trip() {
    let all = load_all(&[repo().join("scenarios")], &maps()).unwrap();
    assert_eq!(all.len(), 10);
    for s in &all {
        assert_eq!(s.file.file_stem().unwrap().to_str().unwrap(), s.id, "file name and id differ");
        assert!(s.notes.is_some(), "{} has no notes", s.id);
        let text = serde_json::to_string_pretty(s).unwrap();
        let back = parse(&text, &s.file, &maps()).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(s).unwrap());
        assert_eq!(back.events, s.events);
        for o in s.objects() {
            assert!(s.map_data.in_corridor(o.pose.pos()), "{}: object {} off the corridor", s.id, o.id);
        }
    }
    // Every map is loaded once and shared.
    assert!(all.windows(2).all(|w| Arc::ptr_eq(&w[0].map_data, &w[1].map_data)));
}

#[test]
fn flat_events_become_typed_events() {
    let mut v: serde_json::Value = serde_json::from_str(MINIMAL).unwrap();
    v["events"] = serde_json::json!([
        {"t": 0, "type": "object_add", "object": {"id": 1, "kind": "truck",
            "place": {"route_to": "F55", "leg": "goto", "at_m": 400, "across": true}}},
        {"after_seen": 1, "delay_s": 45, "type": "object_remove", "id": 1},
        {"t": 200, "type": "request", "text": "Come home after this field."},
        {"t": 5, "type": "object_add", "object": {"id": 2, "kind": "car", "place": {"x": 0, "y": 2}}}
    ]);
    let s = parse_str(&v.to_string()).unwrap();
    assert_eq!(
        s.events[1],
        Event { when: When::AfterSeen { id: 1, delay_s: 45.0 }, what: EventKind::ObjectRemove { id: 1 } }
    );
    assert_eq!(s.events[2].what, EventKind::Request { text: "Come home after this field.".into() });
    let objs = s.objects();
    assert_eq!(objs.len(), 2);
    assert_eq!((objs[0].pose.x, objs[0].pose.y), (400.0, 0.0));
    assert!((objs[0].pose.yaw - std::f64::consts::FRAC_PI_2).abs() < 1e-9, "across the lane");
    assert_eq!(objs[1].kind, ObjectKind::Car);
}

#[test]
fn start_pose_is_read_and_checked() {
    let mut v: serde_json::Value = serde_json::from_str(MINIMAL).unwrap();
    v["start"] = serde_json::json!({"x": 100.0, "y": 0.0});
    let s = parse_str(&v.to_string()).unwrap();
    assert_eq!(s.start_pose(), Pose { x: 100.0, y: 0.0, yaw: 0.0 });
    assert_eq!(
        error_with("start", r#"{"x": 0, "y": 300}"#),
        "x.json: at start: the start (0, 300) lies outside the corridor of the map \"default\""
    );
    assert_eq!(
        error_with("start", r#""home""#),
        "x.json: at start: unknown start \"home\"; expected \"H\" or {\"x\", \"y\", \"yaw\"}"
    );
    assert_eq!(
        error_with("start", r#"{"x": 0, "y": 0, "z": 1}"#),
        "x.json: at start.z: unknown key \"z\"; expected one of x, y, yaw"
    );
}

#[test]
fn errors_are_one_line_with_a_json_path() {
    let cases = [
        ("tier", "0", "x.json: at tier: tier 0 is not a tier; tiers are labels, integers of 1 or more"),
        ("tier", "\"one\"", "x.json: at tier: invalid type: string \"one\", expected an integer of 0 or more"),
        ("condition", "\"icy\"", "x.json: at condition: unknown condition \"icy\"; expected one of dry, wet"),
        ("recovery", r#"{"mode": "auto"}"#, "x.json: at recovery.mode: unknown recovery mode \"auto\"; expected one of off, menu"),
        ("server", r#"{"blocked": 5}"#, "x.json: at server.blocked: unknown key \"blocked\"; expected blocked_s"),
        ("fields", "{}", "x.json: at fields: invalid type: object, expected an array"),
        ("limits", "[]", "x.json: at limits: invalid type: array, expected an object"),
        ("notes", "null", "x.json: at notes: invalid type: null, expected a string"),
        ("deadline_s", "0", "x.json: at deadline_s: must be a positive number, found 0"),
        ("id", "\"a__b\"", "x.json: at id: id \"a__b\" is not a scenario name: use letters, digits, '_' and '-', start with a letter or digit, and no \"__\" (it separates the parts of a run folder's name)"),
        ("success", r#"{"before_deadline": true}"#, "x.json: at success.before_deadline: needs a deadline, but \"deadline_s\" is not set"),
        ("success", "{}", "x.json: at success: no checks; give at least one of scouted, scouted_min, not_scouted, order, home, before_deadline, within_fuel, max_blocked, no_collision, min_clearance_m, max_near_person_s"),
        ("success", r#"{"min_clearance_m": {}}"#, "x.json: at success.min_clearance_m: an empty object checks nothing; give object kinds with metres or leave the key out"),
        ("success", r#"{"max_near_person_s": -1}"#, "x.json: at success.max_near_person_s: must be a number of seconds >= 0, found -1"),
        ("sensing", r#"{"pose_noise_m": -0.1}"#, "x.json: at sensing.pose_noise_m: must be a number >= 0, found -0.1"),
        ("sensing", r#"{"range_noise": 0.1}"#, "x.json: at sensing.range_noise: unknown key \"range_noise\"; expected one of range_noise_m, dropout, spurious_per_sweep, pose_noise_m, yaw_noise_rad"),
    ];
    for (key, value, want) in cases {
        assert_eq!(error_with(key, value), want, "{key} = {value}");
    }
}

#[test]
fn syntax_errors_give_line_and_column() {
    let err = parse_str("{\n  \"schema\": \"acres-harness-scenario-1\",\n}").unwrap_err().to_string();
    assert_eq!(err, "x.json: at $: invalid JSON: trailing comma at line 3 column 1");
    let err = parse_str(&format!("{MINIMAL} []")).unwrap_err().to_string();
    assert_eq!(err, "x.json: at $: invalid JSON: trailing characters at line 2 column 84");
    let err = parse_str("[]").unwrap_err().to_string();
    assert_eq!(err, "x.json: at $: a scenario is a JSON object, found an array");
}

#[test]
fn place_forms_are_told_apart() {
    let place = |p: &str| {
        let mut v: serde_json::Value = serde_json::from_str(MINIMAL).unwrap();
        let p: serde_json::Value = serde_json::from_str(p).unwrap();
        v["events"] = serde_json::json!([{"t": 0, "type": "object_add", "object": {"id": 1, "kind": "person", "place": p}}]);
        parse_str(&v.to_string()).map(|s| s.events[0].what.clone())
    };
    assert!(matches!(
        place(r#"{"loop_of": "F53", "at_fraction": 0.5}"#),
        Ok(EventKind::ObjectAdd { place: Place::LoopOf { across: false, .. }, .. })
    ));
    let err = |p: &str| place(p).unwrap_err().to_string();
    assert_eq!(err(r#"{"yaw": 1}"#), "x.json: at events[0].object.place: a place has one of three forms: {\"x\", \"y\", \"yaw\"}, {\"route_to\", \"leg\", \"at_m\", \"across\"} or {\"loop_of\", \"at_fraction\", \"across\"}; found keys yaw");
    assert_eq!(
        err(r#"{"x": 1}"#),
        "x.json: at events[0].object.place: missing key \"y\" of a place {\"x\", ...}"
    );
    assert_eq!(err(r#"{"loop_of": "F53", "at_fraction": 0.5, "leg": "goto"}"#), "x.json: at events[0].object.place.leg: key \"leg\" does not belong to a loop_of place; its keys are loop_of, at_fraction, across");
    assert_eq!(
        err(r#"{"route_to": "F53", "leg": "back", "at_m": 1}"#),
        "x.json: at events[0].object.place.leg: unknown leg \"back\"; expected one of goto, scout, return"
    );
}

#[test]
fn after_seen_cycles_are_refused() {
    let mut v: serde_json::Value = serde_json::from_str(MINIMAL).unwrap();
    let add = |id: u32, seen: u32| {
        serde_json::json!({"after_seen": seen, "type": "object_add",
        "object": {"id": id, "kind": "car", "place": {"loop_of": "F53", "at_fraction": 0.1}}})
    };
    v["events"] = serde_json::json!([add(1, 2), add(2, 1)]);
    let err = parse_str(&v.to_string()).unwrap_err().to_string();
    assert_eq!(err, "x.json: at events[0].after_seen: object 1 can never be added: it waits on objects seen in a cycle (1 -> 2 -> 1)");
}

#[test]
fn load_all_refuses_a_duplicate_id_and_an_empty_folder() {
    let dir = std::env::temp_dir().join(format!("acres-scenario-dup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.json"), MINIMAL).unwrap();
    std::fs::write(dir.join("b.json"), MINIMAL).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a scenario").unwrap();
    let err = load_all(std::slice::from_ref(&dir), &maps()).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}: at id: scenario id \"m\" is already the id of {}",
            dir.join("b.json").display(),
            dir.join("a.json").display()
        )
    );
    std::fs::remove_file(dir.join("a.json")).unwrap();
    assert_eq!(load_all(std::slice::from_ref(&dir), &maps()).unwrap().len(), 1);
    std::fs::remove_file(dir.join("b.json")).unwrap();
    let err = load_all(std::slice::from_ref(&dir), &maps()).unwrap_err().to_string();
    assert_eq!(err, format!("{}: at $: the folder holds no scenario files (*.json)", dir.display()));
    std::fs::remove_dir_all(&dir).unwrap();
    let err = load(Path::new("/nonexistent/x.json"), &maps()).unwrap_err().to_string();
    assert!(err.starts_with("/nonexistent/x.json: at $: cannot read the file: "), "{err}");
}

#[test]
fn tidy_rewords_serde() {
    let e = serde_json::from_str::<Limits>(r#"{"wake": 1}"#).unwrap_err();
    assert!(error::tidy(&e).starts_with("unknown key \"wake\"; expected one of wake_ups, tool_calls, "));
    let e = serde_json::from_str::<Operator>(r#"{}"#).unwrap_err();
    assert_eq!(error::tidy(&e), "missing key \"answer\"");
    let e = serde_json::from_str::<Operator>(r#"{"answer": "a", "answer": "b"}"#).unwrap_err();
    assert_eq!(error::tidy(&e), "duplicate key \"answer\"");
    let e = serde_json::from_str::<Limits>(r#"{"wake_ups": -1}"#).unwrap_err();
    assert_eq!(error::tidy(&e), "invalid value: integer `-1`, expected an integer of 0 or more");
}
