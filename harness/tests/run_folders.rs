//! A run never destroys a result that existed before it, and every command keeps the exit-code
//! contract (0 ok, 1 a failed run or check, 2 bad input, 3 the environment). A finished run folder
//! survives a later run of the same name that fails to attach, is killed with SIGKILL, or runs
//! out of disk (a small tmpfs); the later run's rows stay in `<name>.partial/`, which `validate`
//! shows as incomplete, until a run ends and takes the name. Real processes, real files.

mod support;
use support::{harness, poll, root, text, Child, TempDir};
#[path = "../../tests/support/require.rs"]
mod require;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const NAME: &str = "t1_01_one_field__checked__scripted";
const SCENARIO: &str = "scenarios/t1_01_one_field.json";

/// Runs t1_01 into `out` to its end; returns the finished folder and its rows.
fn finished_run(out: &str) -> (PathBuf, Vec<u8>) {
    let o = harness(&["run", "--scenario", SCENARIO, "--out", out, "--record", "none", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let folder = Path::new(out).join(NAME);
    let rows = std::fs::read(folder.join("run.jsonl")).expect("the finished run's rows");
    assert!(!rows.is_empty());
    (folder, rows)
}

/// The folder still validates and holds exactly the rows it had.
fn unchanged(folder: &Path, rows: &[u8]) {
    assert_eq!(std::fs::read(folder.join("run.jsonl")).expect("rows"), rows, "{} changed", folder.display());
    let o = harness(&["validate", &folder.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_run_that_cannot_attach_keeps_the_finished_folder_and_exits_3() {
    let tmp = TempDir::new("attach");
    let out = tmp.path("runs");
    let (folder, rows) = finished_run(&out);
    // Nothing listens on port 1: the attach fails before any row.
    let o = harness(&[
        "run",
        "--scenario",
        SCENARIO,
        "--out",
        &out,
        "--world",
        "link",
        "--link-port",
        "1",
        "--link-insecure",
    ]);
    assert_eq!(o.status.code(), Some(3), "a bridge that cannot be reached is the environment: {}", text(&o));
    assert!(text(&o).contains("attaching to the bridge"), "{}", text(&o));
    unchanged(&folder, &rows);
    assert_eq!(names(Path::new(&out)), [NAME], "no partial folder is left by a run that wrote nothing");
}

#[test]
fn a_killed_run_leaves_a_partial_folder_and_the_finished_one_until_a_run_ends() {
    let tmp = TempDir::new("killed");
    let out = tmp.path("runs");
    let (folder, rows) = finished_run(&out);
    let partial = Path::new(&out).join(format!("{NAME}.partial"));
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_acres-harness"))
            .args([
                "run",
                "--scenario",
                SCENARIO,
                "--out",
                &out,
                "--record",
                "none",
                "--pace",
                "20",
                "--quiet",
            ])
            .current_dir(root())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let run_file = partial.join("run.jsonl");
    let seen = poll(Duration::from_secs(60), Duration::from_millis(20), || {
        std::fs::read_to_string(&run_file).ok().filter(|t| t.contains("\"type\":\"pose\"")).map(|_| ())
    });
    assert!(seen.is_some(), "the paced run wrote no pose row into {}", partial.display());
    unchanged(&folder, &rows);
    child.0.kill().unwrap(); // SIGKILL
    child.0.wait().unwrap();
    unchanged(&folder, &rows);
    // The killed run's folder is there, and validate calls it incomplete (exit 1).
    let o = harness(&["validate", &partial.display().to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).to_lowercase().contains("incomplete"), "{}", text(&o));
    // A run that ends takes the name: the earlier folder is replaced, the stale partial is gone.
    let (folder2, rows2) = finished_run(&out);
    assert_eq!(folder2, folder);
    unchanged(&folder2, &rows2);
    assert_eq!(names(Path::new(&out)), [NAME], "only the finished folder is left");
}

#[test]
fn exit_codes_follow_the_contract() {
    let tmp = TempDir::new("codes");
    // 2: bad input, nothing run.
    let o = harness(&["run", "--scenario", "no/such/file.json", "--out", &tmp.path("a")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!tmp.join("a").join(NAME).exists());
    let o = harness(&["validate", "no/such/folder"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // 3: the environment: an out folder that cannot be made (a file stands in its way).
    std::fs::write(tmp.join("file"), b"x").unwrap();
    let o = harness(&["run", "--scenario", SCENARIO, "--out", &tmp.path("file/runs")]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let o = harness(&["learn-costs", "--out", &tmp.path("file/costs")]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    // 1: a folder that does not validate.
    std::fs::create_dir_all(tmp.join("bad")).unwrap();
    std::fs::write(tmp.join("bad/run.jsonl"), b"{\"type\":\"nonsense\"}\n").unwrap();
    let o = harness(&["validate", &tmp.path("bad")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // 0: a run that succeeded.
    let o =
        harness(&["run", "--scenario", SCENARIO, "--out", &tmp.path("ok"), "--record", "none", "--quiet"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    /// A full disk: a tmpfs in a private mount namespace holds a finished run, then is filled;
    /// the next run cannot write its rows, exits 3, is not published, and the finished run is
    /// untouched.
    #[test]
    #[ignore = "needs root (unshare -m, a tmpfs): run by tools/test.sh"]
    fn a_run_on_a_full_disk_exits_3_and_keeps_the_finished_folder() {
        require::root();
        let tmp = TempDir::new("full-disk");
        let mnt = tmp.path("mnt");
        std::fs::create_dir_all(&mnt).unwrap();
        let script = r#"set -e
            mount -t tmpfs -o size=4m tmpfs "$1"
            "$2" run --scenario "$3" --out "$1/runs" --record none --quiet
            cp "$1/runs/$4/run.jsonl" "$1/../before.jsonl"
            # Fill the disk: the next run can make its folder but not write its rows.
            dd if=/dev/zero of="$1/filler" bs=4k 2>/dev/null || true
            rc=0; "$2" run --scenario "$3" --out "$1/runs" --record none --quiet || rc=$?
            echo "second run: exit $rc"
            rm -f "$1/filler"
            cmp "$1/runs/$4/run.jsonl" "$1/../before.jsonl" && echo "finished rows unchanged"
            "$2" validate "$1/runs/$4" >/dev/null && echo "finished folder validates"
            ls "$1/runs""#;
        let o = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", script, "sh", &mnt])
            .arg(env!("CARGO_BIN_EXE_acres-harness"))
            .args([SCENARIO, NAME])
            .current_dir(root())
            .output()
            .expect("unshare runs");
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        assert!(t.contains("second run: exit 3"), "{t}");
        assert!(t.contains("could not be written whole"), "{t}");
        assert!(t.contains("finished rows unchanged") && t.contains("finished folder validates"), "{t}");
        assert!(t.contains(&format!("{NAME}.partial")), "the incomplete run stays partial: {t}");
    }
}
