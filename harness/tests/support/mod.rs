//! What every harness test shares: the repository root, the binary run to its end, temporary folders removed on drop,
//! child processes killed on drop, and polling against a deadline (no fixed sleeps where a
//! condition can be polled). Each test file that needs it says `mod support;`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The `acres-harness` binary run with `args` in the repository root, to its end.
pub fn harness(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_acres-harness"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs")
}

/// A finished process's stdout and stderr, one after the other.
pub fn text(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The repository root (the harness crate's parent).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fresh temporary folder for one test, `acres-<pid>-<name>` (made empty), removed on drop:
/// run folders with recordings are tens of MB each, nothing is left behind.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// Makes the folder for the test `name` (unique within one test binary).
    pub fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("acres-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    /// A path inside the folder, as text (for command lines).
    pub fn path(&self, sub: &str) -> String {
        self.0.join(sub).display().to_string()
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process, killed and reaped on drop.
pub struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Polls `ready` every `every` until it gives a value or `within` has passed (then `None`).
pub fn poll<T>(within: Duration, every: Duration, mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = ready() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(every);
    }
}
