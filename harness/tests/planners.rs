//! `acres-harness planners`: the listing names every planner with its availability, a model file
//! whose key variable is unset is unavailable with the variable's name and never a value, a
//! local server is probed on loopback only, and `--smoke` runs every planner (the model clients
//! against the stub in the process, the line face through its socket) into folders that validate.

mod support;
use support::{root, TempDir};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_acres-harness");

fn harness(args: &[&str], env: &[(&str, &str)], unset: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(root());
    for (k, v) in env {
        c.env(k, v);
    }
    for k in unset {
        c.env_remove(k);
    }
    c.output().expect("the harness runs")
}

fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "exit {:?}: {}", o.status, String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

fn entry<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["planners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no planner {name} in {v:#}"))
}

#[test]
fn the_listing_names_every_planner_with_its_availability() {
    let o = harness(&["planners", "--json"], &[("ANTHROPIC_API_KEY", "sk-ant-canary-4242")], &[]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let v = json_of(&o);
    for (name, kind, face) in [
        ("scripted", "scripted", "in-process"),
        ("classical", "classical", "in-process"),
        ("mcp", "agent", "mcp-stdio mcp-http"),
        ("agent", "agent", "line"),
    ] {
        let e = entry(&v, name);
        assert_eq!((e["kind"].as_str(), e["face"].as_str()), (Some(kind), Some(face)), "{e}");
        assert_eq!(e["available"], true, "{e}");
    }
    // Every shipped model file is listed under its provider.
    let dir = root().join("harness/model_configs");
    let mut files = 0;
    for f in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = f.path().file_stem().unwrap().to_string_lossy().to_string();
        let toml = std::fs::read_to_string(f.path()).unwrap();
        let provider = toml.lines().find_map(|l| l.strip_prefix("provider = ")).unwrap().trim_matches('"');
        let e = v["planners"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name.as_str() && p["file"].is_string())
            .unwrap_or_else(|| panic!("no model file {name} in {v:#}"));
        // scripted.toml is the built-in scripted planner's file: one row, not a second one.
        let face = if name == "scripted" { "in-process" } else { provider };
        assert_eq!(e["face"], face, "{e}");
        assert!(e["available"].is_boolean() && e["reason"].as_str().is_some_and(|r| !r.is_empty()), "{e}");
        files += 1;
    }
    assert!(files >= 5, "{files} model files");
    let scripted = v["planners"].as_array().unwrap().iter().filter(|p| p["name"] == "scripted").count();
    assert_eq!(scripted, 1, "scripted is listed once");
    // The key is set: available, the variable named, the remote host not probed, no value shown.
    let opus = entry(&v, "claude-opus-5-5");
    assert_eq!(opus["available"], true, "{opus}");
    let reason = opus["reason"].as_str().unwrap();
    assert!(
        reason.contains("ANTHROPIC_API_KEY is set") && reason.contains("not probed (remote)"),
        "{reason}"
    );
    assert!(!text.contains("canary-4242"), "the key's value is printed:\n{text}");
    assert!(v["agent_clis"].as_object().is_some_and(|m| m.contains_key("claude") && m.len() == 4), "{v}");
}

#[test]
fn an_unset_key_variable_is_named_and_its_value_never_printed() {
    let o = harness(&["planners", "--json"], &[], &["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]);
    let v = json_of(&o);
    for name in ["claude-opus-5-5", "claude-haiku-5-5-low", "openai-template"] {
        let e = entry(&v, name);
        assert_eq!(e["available"], false, "{e}");
        let var = if name.starts_with("claude") { "ANTHROPIC_API_KEY" } else { "OPENAI_API_KEY" };
        assert_eq!(e["reason"], format!("the key variable {var} is not set"), "{e}");
    }
    // Set to a value: the value appears nowhere, in the table or in the JSON.
    let secret = "sk-canary-value-never-shown";
    for args in [&["planners"][..], &["planners", "--json"][..]] {
        let o = harness(args, &[("OPENAI_API_KEY", secret), ("ANTHROPIC_API_KEY", secret)], &[]);
        assert!(o.status.success());
        let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(!all.contains(secret), "{all}");
        assert!(all.contains("OPENAI_API_KEY"), "{all}");
    }
}

#[test]
fn a_local_server_is_probed_on_loopback_and_a_remote_one_never() {
    let dir = TempDir::new("planners-probe");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let up = listener.local_addr().unwrap().port();
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let file = |name: &str, url: &str| {
        let text = format!(
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"{url}\"\n[prices]\ninput = 0.0\noutput = 0.0\n\
             [price_source]\nsource = \"test\"\ndate = \"2026-12-01\"\n"
        );
        std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    };
    file("up", &format!("http://127.0.0.1:{up}/v1"));
    file("down", &format!("http://localhost:{down}/v1"));
    file("remote", "http://192.0.2.1:8000/v1");
    let o = harness(&["planners", "--json"], &[("ACRES_MODEL_CONFIGS", &dir.display().to_string())], &[]);
    let v = json_of(&o);
    assert_eq!(entry(&v, "up")["available"], true, "{v:#}");
    assert_eq!(entry(&v, "down")["available"], false, "{v:#}");
    assert!(entry(&v, "down")["reason"].as_str().unwrap().contains("no server at 127.0.0.1"), "{v:#}");
    let remote = entry(&v, "remote");
    assert_eq!(remote["reason"], "192.0.2.1:8000 not probed (remote)", "{remote}");
    drop(listener);
}

#[test]
fn the_smoke_run_of_every_planner_passes_and_each_folder_validates() {
    let dir = TempDir::new("planners-smoke");
    let out = dir.path("smoke");
    let o = harness(
        &["planners", "--smoke", "--json", "--out", &out],
        &[],
        &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"],
    );
    let v = json_of(&o);
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results.iter().map(|r| r["planner"].as_str().unwrap()).collect();
    assert_eq!(names, ["scripted", "classical", "openai", "anthropic", "agent", "mcp"]);
    for r in results {
        assert_eq!((r["ok"].as_bool(), r["end"].as_str()), (Some(true), Some("done")), "{r}");
        let folder = PathBuf::from(r["folder"].as_str().unwrap());
        assert!(folder.starts_with(&out), "{}", folder.display());
        let check = harness(&["validate", &folder.display().to_string()], &[], &[]);
        assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));
        let planner = planner_of(&folder);
        let kind = match r["planner"].as_str().unwrap() {
            "scripted" => "scripted",
            "classical" => "classical",
            "agent" | "mcp" => "agent",
            _ => "model",
        };
        assert_eq!(planner["kind"], kind, "{planner}");
    }
    // The model clients really talked to the stub; the agents went through the line face and
    // the MCP face (its tool calls are the run's, as a model's are).
    for (p, face) in [("agent", "line"), ("mcp", "mcp-stdio")] {
        let r = results.iter().find(|r| r["planner"] == p).unwrap();
        let folder = Path::new(r["folder"].as_str().unwrap());
        assert_eq!(planner_of(folder)["face"], face, "{p}");
        let rows = std::fs::read_to_string(folder.join("run.jsonl")).unwrap();
        assert!(rows.contains("\"type\":\"tool\""), "{p}: no tool row");
    }
    for p in ["openai", "anthropic"] {
        let r = results.iter().find(|r| r["planner"] == p).unwrap();
        let rows =
            std::fs::read_to_string(Path::new(r["folder"].as_str().unwrap()).join("run.jsonl")).unwrap();
        assert!(rows.contains("\"model_reply\""), "{p}: no model reply row");
    }
    // The table form: one line per planner, exit 0.
    let o = harness(&["planners", "--smoke", "--out", &dir.path("table")], &[], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.lines().filter(|l| l.split_whitespace().nth(1) == Some("ok")).count(), 6, "{text}");
}

fn planner_of(folder: &Path) -> Value {
    let rows = std::fs::read_to_string(folder.join("run.jsonl")).unwrap();
    let run: Value = serde_json::from_str(rows.lines().next().unwrap()).unwrap();
    run["planner"].clone()
}
