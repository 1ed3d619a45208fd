//! The model-call cache with the real binary and the stub server as a process: a sweep through
//! the stub fills the cache; the same sweep again with the cache sends the stub no request (its
//! request log) and gives the same leaderboard, marked `cached` in its rows; with the stub
//! stopped it still does; `models cache-key` names the entry of a logged request.

mod common;
mod support;

use std::path::Path;

use serde_json::{json, Value};

use acres_harness::runfolder::rows::Row;
use common::stub::*;

fn sweep(spec: &Path, out: &Path, cache: &Path) {
    let o = harness(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--cache",
        cache.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "sweep {}: {}", out.display(), String::from_utf8_lossy(&o.stderr));
}

fn board(out: &Path) -> String {
    let o = harness(&["leaderboard", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// (replies, replies marked cached) of every run folder below `out`.
fn replies(out: &Path) -> (usize, usize) {
    let mut n = (0, 0);
    for f in acres_harness::runfolder::validate::find_run_folders(out) {
        for r in rows_of(&f) {
            if let Row::ModelReply(m) = r {
                n.0 += 1;
                n.1 += usize::from(m.cached);
            }
        }
    }
    n
}

#[test]
fn a_sweep_again_with_the_cache_asks_the_model_nothing_and_scores_the_same() {
    let dir = tmp("model-cache");
    let mut stub = StubProc::start(&dir, json!({"then": "scripted"}));
    let mf = model_file(&dir, "cached", Proto::OpenAi, &stub.url, "", "");
    let scenarios: Vec<String> = ["t1_01_one_field", "t2_06_truck_on_the_lane"]
        .iter()
        .map(|s| format!("\"{}\"", support::root().join(format!("scenarios/{s}.json")).display()))
        .collect();
    let spec = dir.join("sweep.toml");
    std::fs::write(
        &spec,
        format!(
            "scenarios = [{}]\nmodels = [\"{}\"]\nmodes = [\"text\"]\nrepeats = 2\nrecord = \"none\"\nworkers = 2\n",
            scenarios.join(", "),
            mf.display()
        ),
    )
    .unwrap();
    let cache = dir.join("cache");
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    sweep(&spec, &a, &cache);
    let asked = stub.requests().len();
    assert!(asked >= 4, "{asked} requests");
    let (made, cached) = replies(&a);
    assert_eq!((made, cached), (asked, 0));
    let first = board(&a);
    // The same sweep into another folder: every reply from the cache, no request.
    sweep(&spec, &b, &cache);
    assert_eq!(stub.requests().len(), asked, "the second sweep asked the stub");
    assert_eq!(replies(&b), (asked, asked));
    assert_eq!(board(&b), first);
    // The stub stopped: the same again.
    stub.stop();
    sweep(&spec, &c, &cache);
    assert_eq!(replies(&c), (asked, asked));
    assert_eq!(board(&c), first);
    // The key of a logged request names its entry; another seed names none.
    let line = dir.join("request.json");
    std::fs::write(&line, stub.requests()[0].to_string()).unwrap();
    let key = |extra: &[&str]| {
        let mut args = vec![
            "models",
            "cache-key",
            "--config",
            mf.to_str().unwrap(),
            "--request",
            line.to_str().unwrap(),
        ];
        args.extend_from_slice(&["--cache", cache.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let o = harness(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let shown = key(&[]);
    // The run's seed is the body's (OpenAI-compatible servers get it): 1 or 2, by repeat.
    let seed = stub.requests()[0]["body"]["seed"].as_u64().unwrap();
    assert!(shown.contains("provider openai") && shown.contains(&format!("run_seed {seed}\n")), "{shown}");
    assert!(shown.contains("(present)"), "{shown}");
    let k = shown.lines().next().unwrap().strip_prefix("key ").unwrap().to_string();
    let entry: Value = serde_json::from_str(
        &std::fs::read_to_string(cache.join(&k[..2]).join(format!("{k}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(entry["key"], json!(k));
    assert!(entry["latency_s"].as_f64().unwrap() > 0.0);
    assert!(key(&["--seed", "99"]).contains("(absent)"));
}
