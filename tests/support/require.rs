//! What a test needs from the machine beyond cargo: a Python module, a program, root. One helper
//! for every crate's tests, included where it is needed with
//! `#[path = "<relative>/tests/support/require.rs"] mod require;`.
//!
//! The rule (ARCHITECTURE.md, "Tests that need the machine"): a test that needs one of these is
//! `#[ignore = "needs …: run by tools/test.sh"]` and sits in a module named `needs_tools`, so the
//! plain `cargo test` lists it as ignored with its reason; `tools/test.sh` installs what they need
//! and runs them all with `cargo test --workspace -- --ignored needs_tools::`. Run that way, a
//! test whose need is not met FAILS with what is missing and how to get it: it never returns
//! early, so no test passes without testing.
//!
//! One variable: `ACRES_VENV`, the Python virtual environment of the test command (default
//! `.venv` at the repository's root); its `python3` is used when it exists, else the `python3`
//! on `PATH`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root: the first folder above the including crate's manifest that holds
/// `Cargo.lock`.
pub fn repo_root() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("Cargo.lock").is_file() {
        assert!(dir.pop(), "no Cargo.lock above {}", env!("CARGO_MANIFEST_DIR"));
    }
    dir
}

/// The `python3` of the tests: `$ACRES_VENV/bin/python3` (default `<root>/.venv`) when it
/// exists, else `python3` on `PATH`.
pub fn python3() -> PathBuf {
    let venv = std::env::var_os("ACRES_VENV").map(PathBuf::from).unwrap_or_else(|| repo_root().join(".venv"));
    let p = venv.join("bin/python3");
    if p.is_file() {
        p
    } else {
        PathBuf::from("python3")
    }
}

/// Fails the test unless [`python3`] can `import <modules>` (e.g. `"numpy, onnx"`).
pub fn python(modules: &str) {
    let py = python3();
    match Command::new(&py).args(["-c", &format!("import {modules}")]).output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "{} cannot import {modules}: {}\n(tools/test.sh installs tools/requirements-test.txt into .venv; \
             ACRES_VENV names another virtual environment)",
            py.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => panic!("{} does not run: {e} (install Python 3)", py.display()),
    }
}

/// Fails the test unless `program` runs (`program --version`, or `version_arg`); `install` says
/// how to get it (e.g. "apt-get install ffmpeg").
pub fn program(program: &str, version_arg: &str, install: &str) {
    match Command::new(program).arg(version_arg).output() {
        Ok(_) => {}
        Err(e) => panic!("this test needs {program}, which does not run ({e}): {install}"),
    }
}

/// Fails the test unless `path` exists (a file or folder of the repository the test reads).
pub fn path(path: &Path, what: &str) {
    assert!(path.exists(), "this test needs {what} at {}: it is not there", path.display());
}

/// Fails the test unless it runs as root (a mount namespace, a tmpfs).
pub fn root() {
    let uid =
        Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    assert_eq!(
        uid.as_deref().ok(),
        Some("0"),
        "this test needs root (unshare -m and a tmpfs): run it as tools/test.sh does"
    );
}
