//! The `acres-harness` binary end to end, as a user runs it: the shipped suite, score, validate,
//! replay, workers, bad input, damaged run folders. Real processes, real files.

mod support;
use support::{harness, root, text, TempDir};
#[path = "../../tests/support/require.rs"]
mod require;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn scores_without_folders(json_text: &[u8]) -> Value {
    let mut v: Value = serde_json::from_slice(json_text).unwrap();
    for line in v.as_array_mut().unwrap() {
        line.as_object_mut().unwrap().remove("folder");
    }
    v
}

#[test]
fn the_shipped_suite_runs_scores_validates_and_replays() {
    let tmp = TempDir::new("suite");
    let out = tmp.path("a");
    let o = harness(&[
        "run",
        "--scenario",
        "scenarios",
        "--model",
        "scripted",
        "--mode",
        "checked",
        "--out",
        &out,
        "--workers",
        "2",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("10 runs, 10 succeeded"));
    let o = harness(&["score", &out]);
    assert!(o.status.success());
    let table = text(&o);
    for col in [
        "scenario",
        "profile",
        "success",
        "end",
        "scouted",
        "time_s",
        "charged_s",
        "fuel_mj",
        "codes",
        "refused_plans",
        "wake_ups",
        "tool_calls",
        "tokens",
        "usd",
        "interventions",
        "reasoning_logged",
        "reminders",
        "schema_errors",
        "fallback_protocol",
        "pictures_dropped",
        "model_errors",
    ] {
        assert!(table.lines().next().unwrap().contains(col), "the table lacks {col}");
    }
    assert_eq!(table.lines().filter(|l| l.starts_with("t1_") || l.starts_with("t2_")).count(), 10);
    let o = harness(&["validate", &out]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(folded_scores_agree(Path::new(&out)), 10);
    for entry in std::fs::read_dir(&out).unwrap() {
        let folder = entry.unwrap().path();
        let o = harness(&["replay", &folder.display().to_string(), "--out", &tmp.path("replay")]);
        assert!(o.status.success(), "replay of {}: {}", folder.display(), text(&o));
        assert!(text(&o).contains("the world equals the recorded world"));
    }
}

#[test]
fn results_do_not_depend_on_the_number_of_workers() {
    let tmp = TempDir::new("workers");
    let mut scores = Vec::new();
    for (flag, w, dir) in [("--workers", "1", "w1"), ("--workers", "4", "w4"), ("--concurrent", "3", "c3")] {
        let out = tmp.path(dir);
        let o = harness(&["run", "--scenario", "scenarios", "--out", &out, flag, w, "--quiet"]);
        assert!(o.status.success(), "{}", text(&o));
        let s = harness(&["score", "--json", &out]);
        assert!(s.status.success());
        scores.push(scores_without_folders(&s.stdout));
    }
    assert_eq!(scores[0], scores[1]);
    assert_eq!(scores[0], scores[2]);
    assert_eq!(scores[0].as_array().unwrap().len(), 10);
}

#[test]
fn the_t1_tier_succeeds_in_text_and_visual_modes_and_classical_where_it_can() {
    let tmp = TempDir::new("modes");
    let t1: Vec<String> = (1..=5)
        .map(|i| {
            let name = std::fs::read_dir(root().join("scenarios"))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .find(|n| n.starts_with(&format!("t1_0{i}")))
                .unwrap();
            format!("scenarios/{name}")
        })
        .collect();
    for mode in ["text", "visual"] {
        let mut args = vec!["run", "--mode", mode, "--out"];
        let out = tmp.path(mode);
        args.push(&out);
        args.push("--scenario");
        args.extend(t1.iter().map(String::as_str));
        let o = harness(&args);
        assert!(o.status.success(), "{mode}: {}", text(&o));
        assert_eq!(folded_scores_agree(Path::new(&out)), 5);
    }
    let out = tmp.path("classical");
    let o =
        harness(&["run", "--mode", "classical", "--scenario", "scenarios", "--out", &out, "--workers", "2"]);
    let t = text(&o);
    // Classical reads no instruction, so it cannot follow t1_05's order; every other shipped
    // scenario succeeds.
    for line in t.lines().filter(|l| l.starts_with("t1_") || l.starts_with("t2_")) {
        let expect_ok = !line.starts_with("t1_05");
        assert_eq!(line.contains(" ok "), expect_ok, "{line}");
    }
    assert_eq!(o.status.code(), Some(1));
    assert!(Path::new(&out).join("t1_01_one_field__classical__none").join("run.jsonl").is_file());
    assert_eq!(folded_scores_agree(Path::new(&out)), 10);
}

#[test]
fn a_broken_scenario_stops_everything_with_exit_2_and_no_run_folder() {
    let tmp = TempDir::new("broken");
    let sc = tmp.0.join("scenarios");
    copy_dir(&root().join("scenarios"), &sc);
    std::fs::copy(
        root().join("harness/tests/corpus/scenarios/08_unknown_object_kind.json"),
        sc.join("zz_broken.json"),
    )
    .unwrap();
    let out = tmp.path("out");
    let o = harness(&["run", "--scenario", &sc.display().to_string(), "--out", &out]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("zz_broken.json: at events[2].object.kind: unknown kind \"bus\"; expected one of truck, person, tractor, car"), "{err}");
    assert!(
        !Path::new(&out).exists() || std::fs::read_dir(&out).unwrap().next().is_none(),
        "no run folder is made"
    );
    let o = harness(&[
        "run",
        "--scenario",
        "scenarios/t1_01_one_field.json",
        "--out",
        &out,
        "--mode",
        "sideways",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown mode \"sideways\""));
    let o = harness(&["run", "--scenario", "no/such.json", "--out", &out]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn validate_reports_damaged_run_folders_and_replay_detects_a_changed_recording() {
    let tmp = TempDir::new("damage");
    let out = tmp.path("a");
    let o =
        harness(&["run", "--scenario", "scenarios/t2_06_truck_on_the_lane.json", "--out", &out, "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let good = Path::new(&out).join("t2_06_truck_on_the_lane__checked__scripted");
    let damaged = |name: &str| {
        let d = tmp.0.join(name).join("t2_06_truck_on_the_lane__checked__scripted");
        copy_dir(&good, &d);
        d
    };
    let rows = std::fs::read_to_string(good.join("run.jsonl")).unwrap();
    let lines: Vec<&str> = rows.lines().collect();
    // Truncated: a run killed mid-way has no end row.
    let d = damaged("truncated");
    std::fs::write(d.join("run.jsonl"), lines[..lines.len() / 2].join("\n") + "\n").unwrap();
    let o = harness(&["validate", &d.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("incomplete"), "{}", text(&o));
    // A frame deleted.
    let d = damaged("frame");
    std::fs::remove_file(d.join("frames/f0002.png")).unwrap();
    let o = harness(&["validate", &d.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("f0002.png"), "{}", text(&o));
    // A row corrupted.
    let d = damaged("corrupt");
    let mut bad: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    bad[3] = bad[3].replacen("\"type\":\"", "\"type\":\"x", 1);
    std::fs::write(d.join("run.jsonl"), bad.join("\n") + "\n").unwrap();
    let o = harness(&["validate", &d.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("run.jsonl:4:"), "{}", text(&o));
    // Replay of a recording whose first reply came later differs.
    let d = damaged("latency");
    let changed: Vec<String> = lines
        .iter()
        .map(|l| {
            if l.contains("\"type\":\"model_reply\"") && l.contains("\"call\":1,") {
                l.replacen("\"latency_s\":2.0", "\"latency_s\":7.0", 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    assert_ne!(changed.join("\n"), lines.join("\n"));
    std::fs::write(d.join("run.jsonl"), changed.join("\n") + "\n").unwrap();
    let o = harness(&["replay", &d.display().to_string(), "--out", &tmp.path("replay")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("differs"));
}

#[test]
fn a_killed_run_leaves_a_folder_that_validate_reports_incomplete() {
    let tmp = TempDir::new("killed");
    let out = tmp.path("a");
    // At 100 mission seconds per wall second the mission takes about 5 s of wall time.
    let mut child = Command::new(env!("CARGO_BIN_EXE_acres-harness"))
        .args([
            "run",
            "--scenario",
            "scenarios/t1_01_one_field.json",
            "--out",
            &out,
            "--pace",
            "100",
            "--quiet",
        ])
        .current_dir(root())
        .spawn()
        .unwrap();
    // A run in progress writes into <name>.partial: the kill finds its rows there.
    let run_file = Path::new(&out).join("t1_01_one_field__checked__scripted.partial/run.jsonl");
    let rows = || std::fs::read_to_string(&run_file).map(|t| t.lines().count()).unwrap_or(0);
    let ms = std::time::Duration::from_millis;
    support::poll(ms(20_000), ms(20), || (rows() > 100).then_some(()));
    child.kill().unwrap();
    let _ = child.wait();
    let o = harness(&["validate", &out]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("incomplete"), "{}", text(&o));
    let s = harness(&["score", &out]);
    assert!(text(&s).contains("incomplete"), "{}", text(&s));
}

#[test]
fn secret_environment_values_never_reach_the_run_folder() {
    let tmp = TempDir::new("secret");
    let secret = "sk-test-9f8e7d6c5b4a";
    let sc = std::fs::read_to_string(root().join("scenarios/t1_01_one_field.json")).unwrap();
    let sc = sc.replace("Scout F53 and come home.", &format!("Scout F53 and come home. Token {secret}."));
    let dir = tmp.0.join("sc");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t1_01_one_field.json"), sc).unwrap();
    let out = tmp.path("a");
    let o = Command::new(env!("CARGO_BIN_EXE_acres-harness"))
        .args([
            "run",
            "--scenario",
            &dir.join("t1_01_one_field.json").display().to_string(),
            "--out",
            &out,
            "--quiet",
        ])
        .env("ACRES_TEST_API_KEY", secret)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let rows = std::fs::read_to_string(Path::new(&out).join("t1_01_one_field__checked__scripted/run.jsonl"))
        .unwrap();
    assert!(!rows.contains(secret));
    assert!(rows.contains("[redacted]"));
}

/// For every run folder below `out`: the rows carry every fact of the score (`rows_version` 2):
/// the score folded from the rows before the end row (`ScoreFold`, what `score` shows for an
/// unfinished run) with the end row's own facts (end, success, fuel, safety) is the end row's
/// score, every key and every float to the bit; folded before the end, it is the run so far
/// (end `incomplete`, the same counts). Returns the number of folders checked.
fn folded_scores_agree(out: &Path) -> usize {
    use acres_harness::runfolder::rows::{EndCode, Row, ROWS_VERSION};
    use acres_harness::runfolder::score::ScoreFold;
    let mut n = 0;
    for entry in std::fs::read_dir(out).unwrap() {
        let folder = entry.unwrap().path();
        let text = std::fs::read_to_string(folder.join("run.jsonl")).unwrap();
        let rows: Vec<Row> = text.lines().map(|l| Row::decode(l).unwrap()).collect();
        let Some(Row::Run(run)) = rows.first() else { panic!("{}: no run row", folder.display()) };
        let Some(Row::End(end)) = rows.last() else { panic!("{}: no end row", folder.display()) };
        assert_eq!(run.rows_version, Some(ROWS_VERSION), "{}", folder.display());
        let mut fold = ScoreFold::new(run.profile);
        rows[..rows.len() - 1].iter().for_each(|r| fold.row(r));
        let so_far = fold.score();
        assert_eq!(so_far.end, EndCode::Incomplete);
        let e = &end.score;
        let folded = fold.end_score(end.end, end.success, end.t, e.fuel_mj, e.safety.clone());
        let json = |s: &acres_harness::runfolder::rows::Score| serde_json::to_string(s).unwrap();
        assert_eq!(
            json(&folded),
            json(e),
            "{}: the folded score differs from the end row's",
            folder.display()
        );
        assert_eq!(folded, *e, "{}: equal as JSON but not as values", folder.display());
        // The run so far differs only in what the end knows.
        assert_eq!(
            (so_far.codes.clone(), so_far.charged_s.to_bits(), so_far.reminders),
            (e.codes.clone(), e.charged_s.to_bits(), e.reminders)
        );
        fold.row(rows.last().unwrap());
        assert_eq!(fold.score(), *e, "{}: the fold with the end row", folder.display());
        n += 1;
    }
    n
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    /// The rows of every shipped scenario agree with the JSON Schema of the run folder contract.
    #[test]
    #[ignore = "needs jsonschema in the test venv: run by tools/test.sh"]
    fn the_rows_of_the_shipped_suite_agree_with_the_json_schema() {
        require::python("jsonschema");
        let tmp = TempDir::new("schema");
        let out = tmp.path("runs");
        let o = harness(&["run", "--scenario", "scenarios", "--out", &out, "--workers", "2", "--quiet"]);
        assert!(o.status.success(), "{}", text(&o));
        let p = Command::new(require::python3())
            .arg(root().join("tools/check_run_schema.py"))
            .arg(&out)
            .output()
            .expect("python3 runs");
        assert!(
            p.status.success(),
            "{}{}",
            String::from_utf8_lossy(&p.stdout),
            String::from_utf8_lossy(&p.stderr)
        );
    }
}
