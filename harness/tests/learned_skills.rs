//! Learned skills end to end through the `acres-harness` binary (real processes, real files):
//! the scenario with `edge_pass` runs to success with the scripted planner calling the skill's
//! own tool and replays bit for bit; the tool is exported with its schema; a bad skill folder is
//! refused before anything runs (exit 2, file, line and key).

mod support;
use support::{harness, root, text, TempDir};

use serde_json::Value;

const SCENARIO: &str = "scenarios/learned/edge_pass_f55.json";

#[test]
fn the_edge_pass_scenario_runs_to_success_with_the_learned_skill_and_replays() {
    let tmp = TempDir::new("learned");
    let out = tmp.path("runs");
    let o =
        harness(&["run", "--scenario", SCENARIO, "--model", "scripted", "--mode", "checked", "--out", &out]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("1 runs, 1 succeeded"), "{}", text(&o));
    let folder = std::fs::read_dir(&out).unwrap().next().unwrap().unwrap().path();
    let rows: Vec<Value> = std::fs::read_to_string(folder.join("run.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The run row lists the learned skill's tool with its own schema.
    let run = rows.iter().find(|r| r["type"] == "run").unwrap();
    let tool = run["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "edge_pass")
        .expect("edge_pass is a tool");
    assert_eq!(tool["input_schema"]["required"], serde_json::json!(["field"]));
    // The planner called it, and it ended succeeded after scouting F55.
    assert!(rows.iter().any(|r| r["type"] == "tool" && r["name"] == "edge_pass"), "no edge_pass call");
    let ended = rows
        .iter()
        .find(|r| r["type"] == "event" && r["name"] == "skill_ended" && r["skill"] == "learned")
        .expect("the learned skill ended");
    assert_eq!(ended["code"], "succeeded", "{ended}");
    assert!(rows.iter().any(|r| r["type"] == "event" && r["name"] == "field_scouted"));
    let o = harness(&["validate", &out]);
    assert!(o.status.success(), "{}", text(&o));
    let o = harness(&["replay", &folder.display().to_string(), "--out", &tmp.path("replay")]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("the world equals the recorded world"), "{}", text(&o));
}

#[test]
fn tools_exports_the_learned_skill_in_every_style() {
    for style in ["openai", "openai-responses", "anthropic", "mcp"] {
        let o = harness(&["tools", "--style", style, "--scenario", SCENARIO]);
        assert!(o.status.success(), "{style}: {}", text(&o));
        let defs: Value = serde_json::from_slice(&o.stdout).unwrap();
        let names: Vec<String> = defs
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                d.pointer("/function/name")
                    .or(d.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            })
            .collect();
        assert!(names.contains(&"edge_pass".to_string()), "{style}: {names:?}");
    }
}

#[test]
fn a_bad_skill_folder_is_refused_before_anything_runs() {
    let tmp = TempDir::new("learned_bad");
    let dir = std::path::PathBuf::from(tmp.path("sc"));
    std::fs::create_dir_all(dir.join("edge_pass")).unwrap();
    let skill = root().join("scenarios/learned/edge_pass");
    let toml = std::fs::read_to_string(skill.join("skill.toml"))
        .unwrap()
        .replace("margin_m = 8.0", "margin_m = -1.0");
    std::fs::write(dir.join("edge_pass/skill.toml"), toml).unwrap();
    std::fs::copy(skill.join("policy.onnx"), dir.join("edge_pass/policy.onnx")).unwrap();
    std::fs::copy(root().join(SCENARIO), dir.join("edge_pass_f55.json")).unwrap();
    let sc = dir.join("edge_pass_f55.json").display().to_string();
    let out = tmp.path("runs");
    let o = harness(&["run", "--scenario", &sc, "--maps", "scenarios/maps", "--out", &out]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("edge_pass/skill.toml:31: at scope.margin_m: must be 0 or more"), "{t}");
    assert!(!std::path::Path::new(&out).exists(), "a run folder was made");
}
