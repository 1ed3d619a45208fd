//! Learned skills in the skill server, driven in ACRES Core (no LiDAR: the obstacle distance is
//! given where a test needs the shield to hold): every end of the bounded execution — completed,
//! timeout, region_exit, blocked, reactive_fault (a failing policy and one over its budget) and
//! the shield's refusal of an out-of-limits command — and the refusals of bad skill folders.
//!
//! Policies: the shipped `scenarios/learned/edge_pass/policy.onnx` and the crafted ones in
//! `tests/fixtures/` (written by `tools/train_skill.py fixture`: a constant straight command,
//! a constant command over the speed limit, NaN).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use acres_core::{Command, World, WorldConfig};
use acres_farm::geom::Pose;
use acres_farm::route::scout_path;
use acres_farm::{Condition, Map};
use acres_vehicle::learned::{LearnedSkill, Policy};
use acres_vehicle::{
    EventName, Observation, ResultCode, ServerOptions, SkillEvent, SkillKind, SkillRequest, SkillServer,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shipped() -> PathBuf {
    root().join("scenarios/learned/edge_pass")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A skill folder in a fresh temporary directory: the shipped skill.toml with `edits` applied
/// (`(from, to)` text replacements) and the given policy file.
fn folder(tag: &str, policy: &Path, edits: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("acres_learned_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = std::fs::read_to_string(shipped().join("skill.toml")).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from} not in skill.toml");
        text = text.replace(from, to);
    }
    std::fs::write(dir.join("skill.toml"), text).unwrap();
    std::fs::copy(policy, dir.join("policy.onnx")).unwrap();
    dir
}

/// The world at the entry of `field` facing its Scout route, and a server with `skill`.
fn setup(field: &str, skill: &Path, blocked_s: f64) -> (World, SkillServer) {
    let map = Arc::new(Map::load(&root().join("scenarios/maps/default.json")).unwrap());
    let f = &map.fields[field];
    let path = scout_path(&map, field).unwrap();
    let yaw = path.points[1].sub(path.points[0]).yaw();
    let mut cfg =
        WorldConfig::new(map.clone(), Condition::Dry, Pose { x: f.entry_pos.x, y: f.entry_pos.y, yaw });
    cfg.lidar = None;
    let mut opts = ServerOptions::new(Condition::Dry.speed_limits());
    opts.blocked_s = blocked_s;
    let mut server = SkillServer::new(map, opts);
    server.add_learned([Arc::new(LearnedSkill::load(skill).unwrap())]);
    (World::new(cfg), server)
}

fn obs(w: &World) -> Observation {
    let o = w.odometry();
    Observation { t_s: o.t_s, pose: o.pose, speed_mps: o.speed_mps }
}

/// Requests edge_pass of `field` and steps until it ends (or `max_t_s`); its end event and all
/// events. `ahead_m` is the obstacle distance fed to the shield each tick.
fn run(
    field: &str,
    skill: &Path,
    ahead_m: f32,
    blocked_s: f64,
    max_t_s: f64,
) -> (SkillEvent, Vec<SkillEvent>) {
    let (mut w, mut server) = setup(field, skill, blocked_s);
    let reply = server
        .request(&SkillRequest { field: Some(field.into()), ..SkillRequest::learned("edge_pass") }, &obs(&w));
    assert!(reply.accepted, "{reply:?}");
    assert_eq!(reply.skill, Some(SkillKind::Learned));
    let mut events = Vec::new();
    while w.t_s() < max_t_s {
        server.on_scan(ahead_m);
        let t = server.control(&obs(&w));
        w.step(Command { speed_mps: t.speed_mps, yaw_rate_rps: t.yaw_rate_rps });
        events.extend(server.drain_events());
        if let Some(e) = events.iter().find(|e| e.name == EventName::SkillEnded) {
            return (e.clone(), events);
        }
    }
    panic!("edge_pass did not end in {max_t_s} s: {events:?}");
}

#[test]
fn the_shipped_policy_completes_a_pass_and_scouts_the_field() {
    let (end, events) = run("F55", &shipped(), f32::INFINITY, 60.0, 1200.0);
    assert_eq!(end.code, Some(ResultCode::Succeeded), "{end:?}");
    assert!(end.cause.as_deref().unwrap().contains("completed"), "{end:?}");
    assert!(events.iter().any(|e| e.name == EventName::FieldScouted), "{events:?}");
    let started = &events[0];
    assert_eq!((started.name, started.skill), (EventName::SkillStarted, Some(SkillKind::Learned)));
}

#[test]
fn max_s_ends_it_with_timeout() {
    let dir = folder("timeout", &shipped().join("policy.onnx"), &[("max_s = 1500.0", "max_s = 5.0")]);
    let (end, _) = run("F55", &dir, f32::INFINITY, 60.0, 60.0);
    assert_eq!(end.code, Some(ResultCode::Timeout), "{end:?}");
    assert!((end.t_s - 5.0).abs() < 0.11, "{end:?}");
}

#[test]
fn leaving_the_scope_ends_it_with_region_exit() {
    let dir = folder(
        "region",
        &fixture("straight.onnx"),
        &[("field = \"$field\"\nmargin_m = 8.0", "radius_m = 6.0")],
    );
    let (end, _) = run("F55", &dir, f32::INFINITY, 60.0, 60.0);
    assert_eq!(end.code, Some(ResultCode::RegionExit), "{end:?}");
    assert!(end.cause.as_deref().unwrap().contains("6 m around"), "{end:?}");
}

#[test]
fn a_shield_hold_of_blocked_s_ends_it_blocked() {
    let (end, events) = run("F55", &shipped(), 2.0, 3.0, 60.0);
    assert_eq!(end.code, Some(ResultCode::Blocked), "{end:?}");
    assert!(events.iter().any(|e| e.name == EventName::ShieldHold), "{events:?}");
}

#[test]
fn a_failing_policy_ends_it_with_reactive_fault() {
    let dir = folder("nan", &fixture("nan.onnx"), &[]);
    let (end, _) = run("F55", &dir, f32::INFINITY, 60.0, 60.0);
    assert_eq!(end.code, Some(ResultCode::ReactiveFault), "{end:?}");
    assert!(end.cause.as_deref().unwrap().contains("non-finite"), "{end:?}");
}

#[test]
fn a_policy_over_its_tick_budget_ends_it_with_reactive_fault() {
    // A budget of one nanosecond: no inference is that fast, so the first tick trips it.
    let dir = folder(
        "budget",
        &shipped().join("policy.onnx"),
        &[("max_s = 1500.0", "max_s = 1500.0\ntick_budget_ms = 0.000001")],
    );
    let (end, _) = run("F55", &dir, f32::INFINITY, 60.0, 60.0);
    assert_eq!(end.code, Some(ResultCode::ReactiveFault), "{end:?}");
    assert!(end.cause.as_deref().unwrap().contains("over its budget"), "{end:?}");
}

#[test]
fn the_shield_refuses_an_out_of_limits_command_and_never_clamps_it() {
    let dir = folder("fast", &fixture("too_fast.onnx"), &[]);
    let (end, events) = run("F55", &dir, f32::INFINITY, 60.0, 60.0);
    assert_eq!(end.code, Some(ResultCode::Failed), "{end:?}");
    assert!(end.cause.as_deref().unwrap().contains("shield refused"), "{end:?}");
    // Refused on the first tick: the vehicle never moved (no clamped command went out).
    assert!(end.t_s < 0.11, "{events:?}");
}

#[test]
fn rten_gives_the_training_scripts_outputs() {
    let check: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shipped().join("policy_check.json")).unwrap()).unwrap();
    let inputs = check["inputs"].as_array().unwrap();
    let policy = Policy::load(&shipped().join("policy.onnx"), inputs[0].as_array().unwrap().len()).unwrap();
    for (x, want) in inputs.iter().zip(check["outputs"].as_array().unwrap()) {
        let x: Vec<f32> = x.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        let got = policy.run(&x).unwrap();
        for (g, w) in got.iter().zip(want.as_array().unwrap()) {
            assert!((f64::from(*g) - w.as_f64().unwrap()).abs() < 1e-5, "{got:?} vs {want}");
        }
    }
}

#[test]
fn a_policy_gives_bit_identical_commands_and_a_bad_model_is_named() {
    let policy = Policy::load(&shipped().join("policy.onnx"), 5).unwrap();
    let x = [0.9_f32, 1.2, 4.5, -0.3, 120.0];
    let first = policy.run(&x).unwrap();
    // The same observation on other threads, at the same time: the same bits.
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let p = policy.clone();
            std::thread::spawn(move || (0..50).map(|_| p.run(&x).unwrap()).collect::<Vec<_>>())
        })
        .collect();
    for h in handles {
        for got in h.join().unwrap() {
            assert_eq!(got.map(f32::to_bits), first.map(f32::to_bits));
        }
    }
    // The wrong observation size, a file that is not ONNX: each error says what is wrong.
    let e = policy.run(&x[..4]).unwrap_err();
    assert!(e.contains("4 numbers, not 5"), "{e}");
    let junk = std::env::temp_dir().join(format!("acres-not-onnx-{}.onnx", std::process::id()));
    std::fs::write(&junk, b"not a model").unwrap();
    let e = Policy::load(&junk, 5).unwrap_err();
    std::fs::remove_file(&junk).ok();
    assert!(e.starts_with("the model cannot be loaded"), "{e}");
}

/// A bad-folder case: its tag, the edits of `skill.toml` (from, to), the error it must give.
type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);

#[test]
fn bad_skill_folders_are_refused_with_file_line_and_key() {
    let p = shipped().join("policy.onnx");
    let cases: [Case; 5] = [
        (
            "name",
            &[("name = \"edge_pass\"", "name = \"Edge\"")],
            "skill.toml:3: at name: \"Edge\" is not a tool name",
        ),
        ("taken", &[("name = \"edge_pass\"", "name = \"scout\"")], "at name: \"scout\" is already a tool"),
        (
            "obs",
            &[("\"remaining_m\"]", "\"altitude_m\"]")],
            "at observation: observation[4]: unknown field \"altitude_m\"",
        ),
        ("scope", &[("margin_m = 8.0", "margin_m = 8.0\nradius_m = 3.0")], "at scope: give exactly one of"),
        (
            "args",
            &[("[arguments.properties.speed_cap_mps]", "[arguments.properties.lane]")],
            "at arguments.properties.lane: unknown argument",
        ),
    ];
    for (tag, edits, want) in cases {
        let e = LearnedSkill::load(&folder(tag, &p, edits)).unwrap_err().to_string();
        assert!(e.contains(want), "{tag}: {e}");
    }
    // A policy whose input does not fit the observation's length.
    let dir = folder(
        "inputs",
        &fixture("straight.onnx"),
        &[("\"lookahead_y_m\", \"remaining_m\"]", "\"lookahead_y_m\"]")],
    );
    let e = LearnedSkill::load(&dir).unwrap_err().to_string();
    assert!(
        e.contains("policy.onnx: at $: the model's input must be [1, 4] (the observation), not [1, 5]"),
        "{e}"
    );
    // A syntax error names its line.
    let dir = folder("syntax", &p, &[("max_s = 1500.0", "max_s = = 1")]);
    let e = LearnedSkill::load(&dir).unwrap_err().to_string();
    assert!(e.contains("skill.toml:6: at $:"), "{e}");
}
