//! The exported tool definitions (`acres-harness tools --style S`): a golden file per style, each
//! style's API constraints checked on every tool of every mode, a strict-mode call (every key, nulls
//! for the ones not given) accepted by the tools' own checker, and the command through the binary.

mod support;
use support::root;

use std::process::Command;

use serde_json::{json, Value};

use acres_harness::runfolder::rows::{Mode, Profile};
use acres_harness::tools::call::Call;
use acres_harness::tools::export::{drop_nulls, export, Style, WAIT_FOR_WAKE};
use acres_harness::tools::tools_for;

const STYLES: [Style; 4] = [Style::Openai, Style::OpenaiResponses, Style::Anthropic, Style::Mcp];
const MODES: [Mode; 3] = [Mode::Text, Mode::Visual, Mode::Checked];

/// Names the APIs take: letters, digits, `_` and `-`, 1 to 64 characters.
fn good_name(n: &str) -> bool {
    (1..=64).contains(&n.len()) && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Every object schema below `s` (with its JSON path).
fn objects<'a>(s: &'a Value, path: String, out: &mut Vec<(String, &'a Value)>) {
    if s.get("properties").is_some()
        || s.get("type")
            .is_some_and(|t| t == "object" || t.as_array().is_some_and(|a| a.contains(&json!("object"))))
    {
        out.push((path.clone(), s));
    }
    for (k, sub) in s.get("properties").and_then(Value::as_object).into_iter().flatten() {
        objects(sub, format!("{path}.{k}"), out);
    }
    if let Some(items) = s.get("items") {
        objects(items, format!("{path}[]"), out);
    }
}

/// OpenAI strict mode: every object requires all its properties and allows no others, no string
/// length keywords anywhere, `strict: true`.
fn check_openai_strict(tool: &Value, parameters: &Value) {
    let name = tool.pointer("/function/name").or(tool.get("name")).and_then(Value::as_str).unwrap();
    assert!(good_name(name), "{name}");
    let mut objs = Vec::new();
    objects(parameters, name.to_string(), &mut objs);
    assert!(!objs.is_empty());
    for (path, o) in objs {
        let props: Vec<&String> = o["properties"].as_object().unwrap().keys().collect();
        let req: Vec<&str> = o["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(props, req, "{path}: every property is required");
        assert_eq!(o["additionalProperties"], json!(false), "{path}");
    }
    let text = parameters.to_string();
    assert!(!text.contains("minLength") && !text.contains("maxLength"), "{name}: {text}");
}

#[test]
fn every_style_meets_its_api_constraints_in_every_mode() {
    for mode in MODES {
        for profile in [Profile::Vehicle, Profile::Simulator] {
            let tools = tools_for(mode, profile, true);
            for style in STYLES {
                let out = export(&tools, style);
                let list = out.as_array().unwrap();
                let extra = usize::from(style == Style::Mcp);
                assert_eq!(list.len(), tools.len() + extra, "{style:?} {mode:?}");
                for t in list {
                    match style {
                        Style::Openai => {
                            assert_eq!(t["type"], "function");
                            assert_eq!(t["function"]["strict"], true);
                            check_openai_strict(t, &t["function"]["parameters"]);
                        }
                        Style::OpenaiResponses => {
                            assert_eq!((&t["type"], &t["strict"]), (&json!("function"), &json!(true)));
                            check_openai_strict(t, &t["parameters"]);
                        }
                        Style::Anthropic => {
                            assert!(good_name(t["name"].as_str().unwrap()));
                            assert_eq!(t["input_schema"]["type"], "object");
                            assert_eq!(t.as_object().unwrap().len(), 3);
                        }
                        Style::Mcp => {
                            assert!(good_name(t["name"].as_str().unwrap()));
                            assert_eq!(t["inputSchema"]["type"], "object");
                        }
                    }
                }
                if style == Style::Mcp {
                    assert_eq!(list.last().unwrap()["name"], WAIT_FOR_WAKE);
                }
            }
        }
    }
}

/// What a strict-mode model sends: every key, `null` for those it does not give.
fn strict_call(name: &str) -> Value {
    match name {
        "look" => {
            json!({"view": "zoom", "region": {"field": null, "around": "vehicle", "x": null, "y": null, "radius_m": 60}, "frame": null, "other_frame": null})
        }
        "read" => json!({"what": "vehicle"}),
        "plan" => json!({"visits": ["F53"], "return_home": null}),
        "dispatch" => {
            json!({"skill": "goto", "arguments": {"place": null, "field": "F53", "seconds": null, "speed_cap_mps": null}})
        }
        "note" => json!({"text": "hello"}),
        "ask_operator" => json!({"question": "go on?"}),
        other => panic!("no strict call for {other}"),
    }
}

#[test]
fn a_strict_mode_call_with_nulls_is_accepted_once_the_nulls_are_dropped() {
    let tools = tools_for(Mode::Checked, Profile::Vehicle, true);
    let strict = export(&tools, Style::Openai);
    for t in strict.as_array().unwrap() {
        let name = t["function"]["name"].as_str().unwrap();
        let args = strict_call(name);
        // The call has exactly the keys strict mode makes the model send.
        let keys: Vec<&String> = args.as_object().unwrap().keys().collect();
        let want: Vec<&String> =
            t["function"]["parameters"]["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, want, "{name}");
        Call::parse(&tools, name, &drop_nulls(&args)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn golden_definitions_per_style() {
    let tools = tools_for(Mode::Checked, Profile::Vehicle, true);
    insta::assert_json_snapshot!("tools_openai", export(&tools, Style::Openai));
    insta::assert_json_snapshot!("tools_openai_responses", export(&tools, Style::OpenaiResponses));
    insta::assert_json_snapshot!("tools_anthropic", export(&tools, Style::Anthropic));
    insta::assert_json_snapshot!("tools_mcp", export(&tools, Style::Mcp));
}

#[test]
fn the_command_prints_the_definitions_and_refuses_the_classical_mode() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_acres-harness")).args(args).current_dir(root()).output().unwrap()
    };
    let o = run(&["tools", "--style", "openai-responses", "--mode", "text"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read", "dispatch", "note"]);
    let o = run(&["tools", "--style", "openai", "--mode", "classical"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("classical planner has no tools"));
    let o = run(&["tools", "--style", "gemini"]);
    assert_eq!(o.status.code(), Some(2));
}

/// The Agent Skills rules: front matter with `name` (the folder's name: lower-case letters,
/// digits and single hyphens, at most 64 characters) and `description` (what and when, at most
/// 1024 characters); the body teaches the workflow.
#[test]
fn the_installed_skill_validates() {
    let dir = support::TempDir::new("skill");
    let o = Command::new(env!("CARGO_BIN_EXE_acres-harness"))
        .args(["skill", "--install", &dir.path("skills")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let folders: Vec<_> = std::fs::read_dir(dir.join("skills")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(folders.len(), 1);
    let folder_name = folders[0].file_name().unwrap().to_string_lossy().to_string();
    let text = std::fs::read_to_string(folders[0].join("SKILL.md")).unwrap();
    let rest = text.strip_prefix("---\n").expect("front matter first");
    let (front, body) = rest.split_once("\n---\n").expect("front matter closed");
    let mut keys = std::collections::BTreeMap::new();
    for line in front.lines() {
        let (k, v) = line.split_once(": ").unwrap_or_else(|| panic!("not `key: value`: {line}"));
        keys.insert(k.to_string(), v.to_string());
    }
    assert_eq!(keys.keys().collect::<Vec<_>>(), ["description", "name"]);
    let name = &keys["name"];
    assert_eq!(name, &folder_name);
    let good = name.len() <= 64
        && name
            .split('-')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    assert!(good, "{name}");
    let d = &keys["description"];
    assert!(!d.is_empty() && d.chars().count() <= 1024 && d.contains("Use when"), "{d}");
    for word in ["wait_for_wake", "dispatch", "plan", "the run has ended", "thinking time"] {
        assert!(body.contains(word), "the skill says nothing of {word}");
    }
}
