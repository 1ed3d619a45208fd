//! The harness's rooms (its top-level modules, `src/lib.rs`) depend on each other in one
//! direction only, and the tools sense but never read truth past the guard: a room names (`crate::ROOM`) only rooms before it in [`ORDER`], so there is no
//! import cycle between them. Read from the source text of every file, so a new import that
//! turns back fails here with the file that has it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The rooms, lowest first. Below all of them: `clock`, `local_http`, `scenario` and
/// `HARNESS_VERSION`.
const ORDER: [&str; 9] =
    ["world", "planners", "runfolder", "tools", "run", "agents", "sweep", "review", "cli"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every `crate::NAME` in a text, as `NAME`.
fn crate_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        // `acres_harness::` in doc examples and `$crate::` are not this crate's own paths.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        names.insert(name);
    }
    names
}

#[test]
fn every_room_uses_only_the_rooms_before_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for room in ORDER {
        assert!(lib.contains(&format!("pub mod {room};")), "lib.rs declares no room {room}");
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut back = Vec::new();
    let mut checked = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        let room = first.trim_end_matches(".rs");
        let Some(level) = ORDER.iter().position(|r| *r == room) else { continue };
        checked += 1;
        let text = std::fs::read_to_string(file).unwrap();
        for name in crate_names(&text) {
            if let Some(other) = ORDER.iter().position(|r| *r == name) {
                if other > level {
                    back.push(format!("{} ({room}) uses crate::{name}", rel.display()));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} files in the rooms: is the layout still src/<room>/?");
    assert!(back.is_empty(), "imports against the rooms' order {ORDER:?}:\n{}", back.join("\n"));
}

/// The tools sense; only the guard (`tools/state.rs`) reads truth. A tool that called the port
/// or `truth()` itself would read what a real vehicle does not have.
#[test]
fn no_tool_but_the_guard_reaches_the_port_or_the_truth() {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
    let mut files = Vec::new();
    rust_files(&tools, &mut files);
    assert!(files.len() > 5, "{} files in src/tools", files.len());
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("state.rs")) {
        let text = std::fs::read_to_string(file).unwrap();
        for needle in [".port(", ".port_mut(", ".truth(", ".truth_objects("] {
            if text.contains(needle) {
                found.push(format!("{} calls {needle}", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "tools past the guard:\n{}", found.join("\n"));
}

#[test]
fn the_reader_of_paths_finds_what_it_must_and_skips_what_it_must() {
    let names = crate_names("use crate::run::Loop; [`x`](crate::tools) acres_harness::cli $crate::world");
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["run", "tools"]);
}
