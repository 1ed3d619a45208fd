//! The tools through the planner loop: schema errors, the TruthRead guard, the checked-mode plan
//! rule, look and the visual memory, conditions and start poses.

mod common;
mod support;

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use std::path::Path;

use acres_harness::planners::planning::costs::CostTable;
use acres_harness::planners::Block;
use acres_harness::runfolder::rows::{EndCode, Mode, Profile, Row};
use acres_harness::runfolder::writer::RunWriter;
use acres_harness::scenario;
use acres_harness::tools::call::ReadWhat;
use acres_harness::tools::exec::read;
use acres_harness::tools::state::RunState;
use acres_harness::world::CoreWorld;

use common::*;

#[test]
fn each_tool_answers_bad_arguments_with_a_schema_error() {
    let bad: Vec<(&str, Value, &str)> = vec![
        ("look", json!({}), "arguments: missing required key \"view\""),
        (
            "look",
            json!({"view": "sideways"}),
            "arguments.view: \"sideways\" is not one of map, zoom, compare",
        ),
        (
            "look",
            json!({"view": "zoom", "region": {"radius_m": 1}}),
            "arguments.region.radius_m: 1 is below the minimum 5",
        ),
        (
            "read",
            json!({"what": "weather"}),
            "arguments.what: \"weather\" is not one of vehicle, mission, fields, budget, events, notes, scan",
        ),
        ("read", json!({"what": "scan", "x": 1}), "arguments: unknown key \"x\"; allowed: what"),
        ("plan", json!({"visits": "F51"}), "arguments.visits: expected an array, got \"F51\""),
        ("plan", json!({"visits": ["F51", 3]}), "arguments.visits[1]: expected a string, got 3"),
        ("dispatch", json!({"skill": "fly"}), "arguments.skill: \"fly\" is not one of goto"),
        (
            "dispatch",
            json!({"skill": "wait", "arguments": {"seconds": "ten"}}),
            "arguments.arguments.seconds: expected a number",
        ),
        ("note", json!({"text": ""}), "arguments.text: the text is too short"),
        ("ask_operator", json!({}), "arguments: missing required key \"question\""),
        ("teleport", json!({}), "unknown tool \"teleport\""),
    ];
    let calls: Vec<(String, Value)> = bad.iter().map(|(n, a, _)| (n.to_string(), a.clone())).collect();
    let r = run_with(
        "schema",
        json!({"limits": {"tool_calls_per_wake": 20}}),
        Mode::Checked,
        Profile::Vehicle,
        Box::new(move |n, _| {
            Ok(if n == 1 {
                reply(calls.iter().map(|(n, a)| (n.as_str(), a.clone())).collect(), 0.1)
            } else {
                end_turn()
            })
        }),
    );
    let tools = r.tools();
    assert_eq!(tools.len(), bad.len());
    for ((_, res, err), (name, _, want)) in tools.iter().zip(&bad) {
        assert!(*err, "{name} should fail");
        assert!(
            res["error"].as_str().unwrap().starts_with(want),
            "{name}: {} does not start with {want}",
            res["error"]
        );
    }
    assert_eq!(r.end().score.schema_errors, bad.len() as u64);
}

#[test]
fn truth_is_guarded_in_the_vehicle_profile_and_readable_in_the_simulator_profile() {
    // The vehicle profile does not even offer the object list.
    let r = run_with(
        "truth",
        json!({"limits": {"wake_ups": 1}}),
        Mode::Text,
        Profile::Vehicle,
        Box::new(|n, _| {
            Ok(if n == 1 { reply(vec![("read", json!({"what": "objects"}))], 0.5) } else { end_turn() })
        }),
    );
    let (_, res, err) = &r.tools()[0];
    assert!(
        *err && res["error"]
            .as_str()
            .unwrap()
            .starts_with("arguments.what: \"objects\" is not one of vehicle"),
        "{res}"
    );
    // Behind the schema, the guard: a read of truth in the vehicle profile raises TruthRead and
    // marks the run, which the loop then ends with `truth_read`.
    let sc =
        scenario::parse(&scenario_text(json!({})), Path::new("guard.json"), &root().join("scenarios/maps"))
            .unwrap();
    let table = CostTable::load(&root().join("scenarios/costs"), "default", "dry").unwrap();
    let out = std::env::temp_dir().join(format!("acres-guard-{}", std::process::id()));
    for (profile, name) in [(Profile::Vehicle, "vehicle"), (Profile::Simulator, "simulator")] {
        let writer = RunWriter::recreate(&out, name).unwrap();
        let world = Box::new(CoreWorld::new(&sc, 1));
        let mut st = RunState::new(&sc, Mode::Text, profile, world, table.clone(), writer, false);
        let outcome = read(&mut st, ReadWhat::Objects);
        if profile == Profile::Vehicle {
            assert!(outcome.is_error);
            assert!(outcome.result["error"]
                .as_str()
                .unwrap()
                .starts_with("TruthRead: the object list is simulator truth"));
            assert_eq!(st.truth_read.as_ref().map(|t| t.what.as_str()), Some("the object list"));
            let fuel = read(&mut st, ReadWhat::Vehicle);
            assert!(fuel.result.get("fuel_mj").is_none(), "no fuel energy in the vehicle profile");
        } else {
            assert!(!outcome.is_error && outcome.result["objects"].is_array());
            assert!(st.truth_read.is_none());
            assert!(read(&mut st, ReadWhat::Vehicle).result["fuel_mj"].is_number());
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    let r = run_with(
        "truth_ok",
        json!({"limits": {"wake_ups": 1}}),
        Mode::Text,
        Profile::Simulator,
        Box::new(|n, _| {
            Ok(if n == 1 {
                reply(vec![("read", json!({"what": "objects"})), ("read", json!({"what": "vehicle"}))], 0.5)
            } else {
                end_turn()
            })
        }),
    );
    assert_ne!(r.outcome.end, EndCode::TruthRead);
    let tools = r.tools();
    assert!(tools[0].1["objects"].is_array());
    assert!(tools[1].1["fuel_mj"].is_number(), "the simulator profile reads the fuel energy");
}

#[test]
fn checked_mode_needs_an_accepted_plan_whose_next_visit_is_the_field() {
    let brain: Brain = Box::new(|n, _| {
        Ok(match n {
            1 => reply(
                vec![
                    ("dispatch", json!({"skill": "goto", "arguments": {"field": "F51"}})),
                    ("plan", json!({"visits": ["F51", "F51"]})),
                    ("plan", json!({"visits": ["F99"]})),
                    ("plan", json!({"visits": ["F51"]})),
                    ("dispatch", json!({"skill": "goto", "arguments": {"field": "F53"}})),
                    ("dispatch", json!({"skill": "goto", "arguments": {"field": "F51"}})),
                ],
                0.5,
            ),
            _ => end_turn(),
        })
    });
    let r = run_with("checked", json!({"limits": {"sim_s": 60}}), Mode::Checked, Profile::Vehicle, brain);
    let t = r.tools();
    assert!(t[0].2 && t[0].1["error"].as_str().unwrap().contains("needs an accepted plan"));
    assert_eq!(t[1].1["reason"], "fields_not_each_once");
    assert_eq!(t[1].1["source"], "plan_checker");
    assert_eq!(t[2].1["reason"], "unknown_field");
    assert_eq!(t[2].1["source"], "harness");
    assert_eq!(t[3].1["accepted"], true);
    assert!(t[4].1["error"]
        .as_str()
        .unwrap()
        .contains("the next visit of the accepted plan is F51, not F53"));
    assert_eq!(t[5].1["accepted"], true);
    assert_eq!(r.end().score.refused_plans, 2);
    assert_eq!(t[1].1["field"], "F51", "a refusal about one field names it");
    assert_eq!(t[2].1["field"], "F99");
}

#[test]
fn checked_mode_resume_follows_the_plan_rule_and_dropped_fields_are_removed() {
    let brain: Brain = Box::new(|n, _| {
        Ok(match n {
            1 => reply(
                vec![
                    ("plan", json!({"visits": ["F51", "F53"]})),
                    ("dispatch", json!({"skill": "goto", "arguments": {"field": "F51"}})),
                    ("dispatch", json!({"skill": "stop"})),
                    ("plan", json!({"visits": ["F53"]})),
                    ("dispatch", json!({"skill": "resume"})),
                    ("plan", json!({"visits": ["F53", "F51"]})),
                    ("dispatch", json!({"skill": "wait"})),
                ],
                0.5,
            ),
            _ => end_turn(),
        })
    });
    let extra = json!({"fields": ["F51", "F53"], "success": {"scouted": ["F51"]}, "limits": {"sim_s": 60}});
    let r = run_with("resume_rule", extra, Mode::Checked, Profile::Vehicle, brain);
    let t = r.tools();
    assert_eq!(t[3].1["accepted"], true, "a new plan without F51");
    assert!(t[4].2, "resume of the goto to F51 is refused");
    assert!(t[4].1["error"]
        .as_str()
        .unwrap()
        .contains("resume continues to F51, but the next visit of the accepted plan is F53"));
    assert_eq!(t[5].1["reason"], "removed_entry", "F51 was dropped from an accepted plan");
    assert_eq!(t[5].1["field"], "F51");
    assert!(t[6].2, "wait with nothing running goes to the skill server, which needs seconds");
}

#[test]
fn look_gives_pictures_of_every_view_and_keeps_them_in_the_visual_memory() {
    let seen_images = Arc::new(Mutex::new(Vec::new()));
    let seen = seen_images.clone();
    let brain: Brain = Box::new(move |n, blocks| {
        for b in blocks {
            if let Block::Image { frame, png } = b {
                assert!(png.starts_with(b"\x89PNG"));
                seen.lock().unwrap().push(frame.clone());
            }
        }
        Ok(match n {
            1 => reply(
                vec![
                    ("look", json!({"view": "zoom", "region": {"field": "F51"}})),
                    ("look", json!({"view": "zoom", "region": {"around": "vehicle", "radius_m": 30}})),
                    ("look", json!({"view": "zoom", "region": {"x": 400, "y": 0, "radius_m": 100}})),
                    ("look", json!({"view": "compare", "frame": "f0002", "other_frame": "f0003"})),
                    ("look", json!({"view": "map", "frame": "f0002"})),
                    ("look", json!({"view": "zoom", "region": {"field": "F99"}})),
                ],
                0.5,
            ),
            _ => end_turn(),
        })
    });
    let r = run_with("look", json!({"limits": {"wake_ups": 1}}), Mode::Checked, Profile::Vehicle, brain);
    let t = r.tools();
    let frames: Vec<&str> = t.iter().map(|x| x.1["frame"].as_str().unwrap_or("-")).collect();
    // f0001 is the wake-up's own map picture.
    assert_eq!(frames, ["f0002", "f0003", "f0004", "f0005", "f0002", "-"]);
    assert_eq!(t[0].1["view"], "zoom");
    let vb = t[0].1["view_box"].as_array().unwrap();
    assert!(
        vb[0].as_f64().unwrap() <= 100.0 && vb[2].as_f64().unwrap() >= 230.0,
        "the zoom holds F51: {vb:?}"
    );
    assert!(t[1].1["m_per_px"].as_f64().unwrap() < 0.2);
    assert_eq!(t[3].1["view"], "compare");
    assert!(t[5].2 && t[5].1["error"].as_str().unwrap().contains("F99"));
    assert_eq!(*seen_images.lock().unwrap(), ["f0001", "f0002", "f0003", "f0004", "f0005", "f0002"]);
    let frame_rows = r.rows.iter().filter(|row| matches!(row, Row::Frame(_))).count();
    assert_eq!(frame_rows, 5, "the memory holds five pictures; looking again adds none");
}

#[test]
fn wet_ground_is_slower_and_a_start_pose_on_the_lane_works() {
    let dry = run_with("dry", json!({}), Mode::Text, Profile::Vehicle, driver());
    let wet = run_with("wet", json!({"condition": "wet"}), Mode::Text, Profile::Vehicle, driver());
    assert!(dry.outcome.success && wet.outcome.success);
    assert!(wet.outcome.t_s > dry.outcome.t_s * 1.15, "wet {} vs dry {}", wet.outcome.t_s, dry.outcome.t_s);
    assert!(wet.end().score.fuel_mj > dry.end().score.fuel_mj * 1.2);
    let r = run_with(
        "start",
        json!({"start": {"x": 300.0, "y": 0.0, "yaw": std::f64::consts::PI}}),
        Mode::Text,
        Profile::Vehicle,
        driver(),
    );
    assert!(r.outcome.success, "{:?}", r.end().failed);
    match &r.rows[1] {
        Row::Pose(p) => assert!((p.x - 300.0).abs() < 1e-9 && (p.yaw - std::f64::consts::PI).abs() < 1e-9),
        other => panic!("the second row is the first pose: {other:?}"),
    }
}
