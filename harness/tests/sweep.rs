//! Sweeps and leaderboards with the real binary: a sweep killed (SIGKILL) mid-way and run again
//! finishes without redoing its finished runs and gives the leaderboard of an uninterrupted one;
//! shards merge into the single sweep's leaderboard byte for byte; a fixture of run folders with
//! known outcomes gives the hand-computed pass^k, Wilson interval and flip rate; duplicates and
//! missing runs are named; a bad spec is exit 2 with the file and the key; the emitted Slurm
//! script passes shellcheck and the Kubernetes manifest validates against the Kubernetes API
//! models (the `kubernetes` package in the test venv).

#[path = "../../tests/support/require.rs"]
mod require;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use support::{harness, poll, root, text, Child, TempDir};

/// A spec of `scenarios` (shipped file stems) in text mode, `repeats` each, recording nothing.
fn spec(dir: &Path, scenarios: &[&str], repeats: u32) -> PathBuf {
    let files: Vec<String> = scenarios
        .iter()
        .map(|s| format!("\"{}\"", root().join("scenarios").join(format!("{s}.json")).display()))
        .collect();
    let p = dir.join("sweep.toml");
    std::fs::write(
        &p,
        format!(
            "scenarios = [{}]\nmodels = [\"scripted\"]\nmodes = [\"text\"]\nrepeats = {repeats}\nrecord = \"none\"\n",
            files.join(", ")
        ),
    )
    .unwrap();
    p
}

/// The run row's wall time of every finished run below `out`, by run folder.
fn start_walls(out: &Path) -> BTreeMap<PathBuf, f64> {
    let mut m = BTreeMap::new();
    for f in acres_harness::runfolder::validate::find_run_folders(out) {
        if f.components().any(|c| c.as_os_str().to_string_lossy().ends_with(".partial")) {
            continue;
        }
        let t = std::fs::read_to_string(f.join("run.jsonl")).unwrap();
        let first: Value = serde_json::from_str(t.lines().next().unwrap()).unwrap();
        m.insert(f.strip_prefix(out).unwrap().to_path_buf(), first["wall"].as_f64().unwrap());
    }
    m
}

fn board_json(dirs: &[&Path]) -> (String, Output) {
    let mut args = vec!["leaderboard".to_string()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.push("--json".into());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = harness(&refs);
    (String::from_utf8_lossy(&o.stdout).into_owned(), o)
}

#[test]
fn a_sweep_killed_mid_way_resumes_without_redoing_finished_runs() {
    let tmp = TempDir::new("sweep-kill");
    let spec = spec(
        &tmp,
        &["t1_01_one_field", "t2_06_truck_on_the_lane", "t2_09_static_truck_in_the_next_field"],
        2,
    );
    let (a, b) = (tmp.join("a"), tmp.join("b"));
    let (spec_s, a_s, b_s) = (spec.display().to_string(), a.display().to_string(), b.display().to_string());
    let child = Command::new(env!("CARGO_BIN_EXE_acres-harness"))
        .args(["sweep", &spec_s, "--out", &a_s, "--workers", "1", "--quiet"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Child(child);
    // Kill it once two runs are finished (the third is being made or about to be).
    let two = poll(Duration::from_secs(300), Duration::from_millis(20), || {
        (start_walls(&a).len() >= 2).then_some(())
    });
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert!(two.is_some(), "the sweep finished no two runs in 300 s");
    let before = start_walls(&a);
    assert!(before.len() < 6, "the sweep ended before it was killed: {} runs", before.len());
    let o = harness(&["sweep", &spec_s, "--out", &a_s, "--list"]);
    assert!(o.status.success(), "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout);
    assert_eq!(listed.lines().filter(|l| l.ends_with("  done")).count(), before.len(), "{listed}");
    let o = harness(&["sweep", &spec_s, "--out", &a_s, "--workers", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("{} done before, {} made now", before.len(), 6 - before.len())),
        "{}",
        text(&o)
    );
    let after = start_walls(&a);
    assert_eq!(after.len(), 6);
    for (folder, wall) in &before {
        assert_eq!(after.get(folder), Some(wall), "{} was made again", folder.display());
    }
    let leftovers: Vec<_> = std::fs::read_dir(a.join("scripted/text/vehicle"))
        .unwrap()
        .flat_map(|s| std::fs::read_dir(s.unwrap().path()).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // An uninterrupted sweep, and the same sweep in three shards into three folders.
    let o = harness(&["sweep", &spec_s, "--out", &b_s, "--workers", "2", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let (ja, oa) = board_json(&[&a]);
    let (jb, ob) = board_json(&[&b]);
    assert!(oa.status.success() && ob.status.success(), "{}{}", text(&oa), text(&ob));
    assert_eq!(ja, jb);
    let shards: Vec<PathBuf> = (1..=3).map(|i| tmp.join(format!("s{i}"))).collect();
    for (i, d) in shards.iter().enumerate() {
        let o = harness(&[
            "sweep",
            &spec_s,
            "--out",
            &d.display().to_string(),
            "--shard",
            &format!("{}/3", i + 1),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let refs: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let (js, os) = board_json(&refs);
    assert!(os.status.success(), "{}", text(&os));
    assert_eq!(js, ja, "the merged shards' leaderboard differs from one sweep's");
    // Without a shard that made runs: its runs are missing, by id.
    let gone = shards.iter().position(|d| !start_walls(d).is_empty()).unwrap();
    let kept: Vec<&Path> = refs.iter().enumerate().filter(|(i, _)| *i != gone).map(|(_, d)| *d).collect();
    let (_, o) = board_json(&kept);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let missing = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("missing scripted/text/vehicle/"))
        .count();
    assert_eq!(missing, start_walls(&shards[gone]).len(), "{}", text(&o));
    // The same folder twice: every run is a duplicate.
    let (_, o) = board_json(&[&a, &b]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("duplicate scripted/text/vehicle/t1_01_one_field/1"),
        "{}",
        text(&o)
    );
}

/// Rewrites a run folder's run row and end row for a fixture place.
fn place(template: &Path, out: &Path, id: (&str, &str, &str, u32), end: &str, success: bool) {
    let (model, mode, scenario, rep) = id;
    let dir = out.join(format!("{model}/{mode}/vehicle/{scenario}/{rep}/{scenario}__{mode}__{model}"));
    std::fs::create_dir_all(&dir).unwrap();
    let t = std::fs::read_to_string(template.join("run.jsonl")).unwrap();
    let lines: Vec<&str> = t.lines().collect();
    let mut run: Value = serde_json::from_str(lines[0]).unwrap();
    run["model"] = json!(model);
    run["mode"] = json!(mode);
    run["scenario"] = json!(scenario);
    // The planner of the place: a model (or the classical rules), as a sweep of it records.
    if run["planner"].is_object() {
        run["planner"]["kind"] = json!(if mode == "classical" { "classical" } else { "model" });
        run["planner"]["options"] = json!({"model": model, "provider": "openai"});
    }
    let mut last: Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
    last["end"] = json!(end);
    last["success"] = json!(success);
    last["score"]["end"] = json!(end);
    last["score"]["success"] = json!(success);
    last["score"]["usd"] = json!(0.5);
    last["score"]["tokens"] = json!(1000);
    let mut out_lines = vec![run.to_string()];
    out_lines.extend(lines[1..lines.len() - 1].iter().map(|l| l.to_string()));
    out_lines.push(last.to_string());
    std::fs::write(dir.join("run.jsonl"), out_lines.join("\n") + "\n").unwrap();
}

#[test]
fn the_leaderboard_of_a_fixture_matches_hand_computed_pass_k_wilson_and_flips() {
    let tmp = TempDir::new("sweep-fixture");
    let spec = spec(&tmp, &["t1_01_one_field"], 1);
    let seed = tmp.join("seed");
    let o = harness(&["sweep", &spec.display().to_string(), "--out", &seed.display().to_string(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let template = seed.join("scripted/text/vehicle/t1_01_one_field/1/t1_01_one_field__text__scripted");
    let out = tmp.join("fixture");
    // Scenario A: 2 of 3; B: 3 of 3; C: 1 of 2 counted, its third run a model_error.
    let outcomes = [
        ("A", [("done", true), ("done", true), ("limit_sim_time", false)]),
        ("B", [("done", true), ("done", true), ("done", true)]),
        ("C", [("done", true), ("limit_stalled", false), ("model_error", false)]),
    ];
    for (sc, runs) in outcomes {
        for (i, (end, ok)) in runs.iter().enumerate() {
            place(&template, &out, ("m", "text", sc, i as u32 + 1), end, *ok);
        }
    }
    let (j, o) = board_json(&[&out]);
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_str(&j).unwrap();
    let g = &v["groups"][0];
    assert_eq!(
        (g["runs"].as_u64(), g["infrastructure"].as_u64(), g["counted"].as_u64()),
        (Some(9), Some(1), Some(8))
    );
    assert_eq!(g["successes"], json!(6));
    let close = |a: &Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-9;
    assert!(close(&g["success_rate"], 0.75));
    // Wilson, 6 of 8: centre (0.75 + z²/16)/(1 + z²/8), half z/(1 + z²/8)·√(0.75·0.25/8 + z²/256).
    let z = 1.959_963_984_540_054f64;
    let d = 1.0 + z * z / 8.0;
    let (c, h) = ((0.75 + z * z / 16.0) / d, z / d * (0.75 * 0.25 / 8.0 + z * z / 256.0).sqrt());
    assert!(close(&g["wilson95"][0], c - h) && close(&g["wilson95"][1], c + h), "{}", g["wilson95"]);
    // pass^1 = (2/3 + 1 + 1/2)/3; pass^2 = (1/3 + 1 + 0)/3; pass^3: C has 2 counted runs (< 3),
    // left out: (0 + 1)/2.
    let p = g["pass_k"].as_array().unwrap();
    assert_eq!(p.len(), 3);
    assert!(close(&p[0]["value"], (2.0 / 3.0 + 1.0 + 0.5) / 3.0));
    assert!(close(&p[1]["value"], (1.0 / 3.0 + 1.0) / 3.0));
    assert!(close(&p[2]["value"], 0.5) && p[2]["scenarios"] == json!(2));
    // Flips: A and C disagree, B does not.
    assert!(close(&g["flip_rate"], 2.0 / 3.0));
    assert!(close(&g["usd_per_run"], 0.5) && close(&g["usd_per_success"], 4.5 / 6.0));
    // A plan naming a run that is not there: missing, by id, exit 1.
    std::fs::write(
        out.join("sweep.plan.json"),
        r#"{"spec": "x.toml", "runs": ["m/text/vehicle/A/1", "m/text/vehicle/D/1"]}"#,
    )
    .unwrap();
    let (_, o) = board_json(&[&out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing m/text/vehicle/D/1"), "{}", text(&o));
    // The other outputs: CSV, Markdown, SVG and PNG.
    let (csv, md, svg, png) = (tmp.join("b.csv"), tmp.join("b.md"), tmp.join("b.svg"), tmp.join("b.png"));
    let o = harness(&[
        "leaderboard",
        &out.display().to_string(),
        "--csv",
        &csv.display().to_string(),
        "--markdown",
        &md.display().to_string(),
        "--svg",
        &svg.display().to_string(),
        "--png",
        &png.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(std::fs::read_to_string(&csv).unwrap().starts_with("planner,model,mode,profile,runs,"));
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .contains("| model | m | text | vehicle | 9 | 1 | 6/8 0.750 |"));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<polyline"));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn a_sweep_of_two_planners_shows_the_paired_comparison_in_every_output_form() {
    let tmp = TempDir::new("sweep-compare");
    let files: Vec<String> = ["t1_01_one_field", "t1_04_fuel_limit_excludes_a_field"]
        .iter()
        .map(|s| format!("\"{}\"", root().join("scenarios").join(format!("{s}.json")).display()))
        .collect();
    let spec = tmp.join("sweep.toml");
    std::fs::write(
        &spec,
        format!(
            "scenarios = [{}]\nmodels = [\"scripted\"]\nmodes = [\"text\", \"classical\"]\nrepeats = 2\nrecord = \"none\"\nworkers = 2\n",
            files.join(", ")
        ),
    )
    .unwrap();
    let out = tmp.join("out");
    let o = harness(&["sweep", &spec.display().to_string(), "--out", &out.display().to_string(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let (a, b) = ("scripted/scripted/text/vehicle", "none/classical/vehicle");
    let outs = ["j.json", "c.csv", "m.md"].map(|f| tmp.join(f));
    let d = out.display().to_string();
    let mut args = vec!["leaderboard", &d, "--compare", a, b];
    let paths: Vec<String> = outs.iter().map(|p| p.display().to_string()).collect();
    args.extend(["--json", &paths[0], "--csv", &paths[1], "--markdown", &paths[2]]);
    let o = harness(&args);
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&outs[0]).unwrap()).unwrap();
    assert_eq!(v["schema"], json!("acres-leaderboard-3"));
    let c = &v["comparisons"][0];
    assert_eq!(c["a"]["key"], json!(a));
    assert_eq!(c["b"]["key"], json!("classical/none/classical/vehicle"));
    // Two scenarios × two repeats, paired by scenario and seed; nothing left over.
    assert_eq!(c["pairs"], json!(4), "{c}");
    assert_eq!(c["unpaired"], json!([]));
    let (n, bo, ne, ao, bx) = (
        c["pairs"].as_u64().unwrap(),
        c["both"].as_u64().unwrap(),
        c["neither"].as_u64().unwrap(),
        c["a_only"].as_u64().unwrap(),
        c["b_only"].as_u64().unwrap(),
    );
    assert_eq!(bo + ne + ao + bx, n);
    assert_eq!(c["mcnemar_p"].as_f64(), Some(acres_harness::sweep::stats::mcnemar_exact(ao, bx)));
    assert_eq!(c["bootstrap_resamples"], json!(10_000));
    let diff = c["difference"].as_f64().unwrap();
    let (lo, hi) = (c["bootstrap95"][0].as_f64().unwrap(), c["bootstrap95"][1].as_f64().unwrap());
    assert!(lo <= diff && diff <= hi, "{c}");
    // The groups carry the noise floor; the scripted and classical planners repeat themselves.
    for g in v["groups"].as_array().unwrap() {
        assert_eq!(g["noise_floor"], json!(0.0), "{g}");
    }
    let csv = std::fs::read_to_string(&outs[1]).unwrap();
    let (groups_csv, compare_csv) = csv.split_once("\n\n").expect("the comparison after an empty line");
    assert_eq!(groups_csv.lines().count(), 3, "{csv}");
    assert!(compare_csv.starts_with("a,b,pairs,both/neither,a_only,b_only,mcnemar_p,"), "{csv}");
    assert!(compare_csv.contains(&format!("{a},classical/none/classical/vehicle,4,")), "{csv}");
    let md = std::fs::read_to_string(&outs[2]).unwrap();
    assert!(
        md.contains(&format!("| {a} | classical/none/classical/vehicle | 4 | {bo}/{ne} | {ao} | {bx} |")),
        "{md}"
    );
    let o = harness(&["leaderboard", &d, "--baseline", b]);
    assert!(o.status.success(), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("mcnemar_p") && table.contains(&format!("{a}  classical/none/classical/vehicle  4")),
        "{table}"
    );
    let o = harness(&["leaderboard", &d, "--compare", a, "gpt/text/vehicle"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no group gpt/text/vehicle in the leaderboard"), "{}", text(&o));
}

#[test]
fn a_bad_spec_is_refused_with_the_file_and_the_key() {
    let tmp = TempDir::new("sweep-bad");
    let p = tmp.join("bad.toml");
    std::fs::write(&p, "scenarios = [\"x\"]\nmodes = [\"checked\"]\nrepeats = 0\n").unwrap();
    let o = harness(&["sweep", &p.display().to_string(), "--out", &tmp.path("o")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("bad.toml: at scenarios[0]:"), "{}", text(&o));
    std::fs::write(
        &p,
        format!(
            "scenarios = [\"{}\"]\nmodes = [\"checked\"]\nrepeats = 0\n",
            root().join("scenarios").display()
        ),
    )
    .unwrap();
    let o = harness(&["sweep", &p.display().to_string(), "--out", &tmp.path("o")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("bad.toml: at repeats: must be at least 1"), "{}", text(&o));
    let o = harness(&["sweep", &p.display().to_string(), "--out", &tmp.path("o"), "--shard", "4/3"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    #[test]
    #[ignore = "needs shellcheck and the Kubernetes models in the test venv: run by tools/test.sh"]
    fn the_emitted_slurm_script_passes_shellcheck_and_the_k8s_manifest_validates() {
        let tmp = TempDir::new("sweep-emit");
        let spec = spec(&tmp, &["t1_01_one_field"], 3);
        let s = spec.display().to_string();
        let o = harness(&[
            "sweep",
            &s,
            "--out",
            "/scratch/out",
            "--emit",
            "slurm",
            "--shards",
            "3",
            "--throttle",
            "2",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let script = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            script.contains("--array=1-3%2") && script.contains("--dependency=\"afterok:$array_job\""),
            "{script}"
        );
        let file = tmp.join("submit.sh");
        std::fs::write(&file, &script).unwrap();
        require::program("shellcheck", "--version", "apt-get install shellcheck");
        let o = Command::new("shellcheck").arg(&file).output().expect("shellcheck runs");
        assert!(o.status.success(), "shellcheck:\n{}", text(&o));
        let o = harness(&[
            "sweep",
            &s,
            "--out",
            "/sweep/out",
            "--emit",
            "k8s",
            "--shards",
            "3",
            "--image",
            "acres:1",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let manifest = tmp.join("job.yaml");
        std::fs::write(&manifest, &o.stdout).unwrap();
        require::python("yaml, kubernetes");
        let py = require::python3();
        let check = root().join("harness/tests/k8s_validate.py");
        let o = Command::new(py).arg(&check).arg(&manifest).output().unwrap();
        assert!(o.status.success(), "k8s_validate:\n{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("2 documents valid"), "{}", text(&o));
    }
}
