//! The scenario corpus: every broken file in `harness/tests/corpus/scenarios/` is refused with the
//! exact line of its sibling `.expect` file, and the shipped folder `scenarios/` loads whole.
//!
//! The test passes absolute paths and removes the repository root (with its `/`) from each
//! message, so an `.expect` file holds the line that `acres-harness run --scenario
//! harness/tests/corpus/scenarios/<file>` prints from the repository root.

use std::path::{Path, PathBuf};

use acres_harness::scenario::{load, load_all};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the harness crate sits in the repository").into()
}

fn maps() -> PathBuf {
    repo().join("scenarios/maps")
}

fn corpus() -> PathBuf {
    repo().join("harness/tests/corpus/scenarios")
}

/// The corpus files with the given extension, sorted by name.
fn corpus_files(ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("the corpus folder")
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

/// An error line as the repository root would print it.
fn relative(line: &str) -> String {
    line.replace(&format!("{}/", repo().display()), "")
}

#[test]
fn every_broken_scenario_is_refused_with_its_exact_line() {
    let files = corpus_files("json");
    assert!(files.len() >= 18, "the corpus has only {} files", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let expect_file = file.with_extension("expect");
        let want = std::fs::read_to_string(&expect_file)
            .unwrap_or_else(|e| panic!("{}: {e}", expect_file.display()))
            .trim_end_matches('\n')
            .to_string();
        match load(file, &maps()) {
            Ok(s) => {
                failures.push(format!("{}: accepted (id {})", relative(&file.display().to_string()), s.id))
            }
            Err(e) => {
                let got = relative(&e.to_string());
                assert!(!got.contains('\n'), "a multi-line error: {got}");
                if got != want {
                    failures.push(format!("want {want}\n got {got}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus files disagree:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn every_corpus_file_has_an_expect_file_and_a_level() {
    let jsons = corpus_files("json");
    let expects = corpus_files("expect");
    let stems = |v: &[PathBuf]| {
        v.iter().map(|p| p.file_stem().unwrap().to_string_lossy().into_owned()).collect::<Vec<_>>()
    };
    assert_eq!(stems(&jsons), stems(&expects), "every NN_what.json needs NN_what.expect and no other");
    let levels = std::fs::read_to_string(corpus().join("levels.txt")).expect("levels.txt");
    let listed: Vec<(String, String)> = levels
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (file, level) = l.split_once(' ').unwrap_or_else(|| panic!("levels.txt: bad line {l:?}"));
            assert!(["syntax", "schema", "semantic"].contains(&level), "levels.txt: unknown level in {l:?}");
            (file.to_string(), level.to_string())
        })
        .collect();
    let names: Vec<String> =
        jsons.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    let listed_names: Vec<String> = listed.iter().map(|(f, _)| f.clone()).collect();
    assert_eq!(listed_names, names, "levels.txt must list every corpus file once, in name order");
    for name in &names {
        let prefix = &name[..3];
        assert!(
            prefix.ends_with('_') && prefix[..2].chars().all(|c| c.is_ascii_digit()),
            "{name} is not NN_what.json"
        );
    }
}

#[test]
fn the_shipped_folder_holds_the_ten_scenarios() {
    let all = load_all(&[repo().join("scenarios")], &maps()).unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "t1_01_one_field",
            "t1_02_three_fields_deadline",
            "t1_03_time_limit_excludes_a_field",
            "t1_04_fuel_limit_excludes_a_field",
            "t1_05_instruction_with_an_order",
            "t2_06_truck_on_the_lane",
            "t2_07_person_in_the_field",
            "t2_08_two_stops_and_a_deadline",
            "t2_09_static_truck_in_the_next_field",
            "t2_10_wait_then_a_request",
        ]
    );
    for s in &all {
        let want_tier = if s.id.starts_with("t1_") { 1 } else { 2 };
        assert_eq!(s.tier, want_tier, "{}", s.id);
        assert_eq!(s.tier == 2, !s.events.is_empty(), "{}: tier 2 means objects", s.id);
    }
}

#[test]
fn load_all_stops_at_the_first_broken_file_of_a_folder() {
    let err = load_all(&[repo().join("scenarios"), corpus()], &maps()).unwrap_err().to_string();
    let first = corpus_files("json").remove(0);
    let want = std::fs::read_to_string(first.with_extension("expect")).unwrap();
    assert_eq!(relative(&err), want.trim_end());
}
