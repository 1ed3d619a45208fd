//! Support for tests and benchmarks that start DDS processes: the network-safety gate, child
//! processes killed on drop, polling against a deadline, the workspace's binaries, and the gate of
//! the tests that compare with a Python reference. No node calls it; it is always compiled (std
//! only, no feature) so that the test builds and the node builds share one acres_ros.
//!
//! NETWORK SAFETY (ARCHITECTURE.md): a test that creates DDS participants is
//! `#[ignore = "needs a private network namespace: ..."]` (so a plain `cargo test` lists it as
//! ignored, never as passed) and calls [`assert_private_netns`] first, which fails it outside one;
//! `tools/test.sh` runs such tests with `--include-ignored` under `unshare -n`. A benchmark calls
//! [`require_private_netns`] and returns when it says no.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Fails (panics) unless this process is in a private network namespace whose only interface is
/// `lo`: the first call of every DDS test, so that none runs, or passes, outside one.
pub fn assert_private_netns(what: &str) {
    if !crate::env::in_loopback_only_netns() {
        let ifaces = crate::env::namespace_interfaces();
        panic!(
            "\n!!!! {what} REFUSED: not inside a private network namespace (interfaces {ifaces:?}).\n!!!! Run it as tools/test.sh does: unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; exec cargo test ... -- --include-ignored'\n"
        );
    }
}

/// True when this process is in a private network namespace whose only interface is `lo`
/// ([`crate::env::in_loopback_only_netns`]). Otherwise prints that `what` is skipped and how to
/// run it (`unshare -n ...`), or panics when `ACRES_REQUIRE_NETNS=1` (the test command sets it,
/// so a skip there is a failure).
pub fn require_private_netns(what: &str) -> bool {
    if crate::env::in_loopback_only_netns() {
        return true;
    }
    let ifaces = crate::env::namespace_interfaces();
    let msg = format!(
        "\n!!!! {what} SKIPPED: not inside a private network namespace (interfaces {ifaces:?}).\n!!!! Run it as tools/test.sh does: unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; exec cargo test ...'\n"
    );
    if std::env::var("ACRES_REQUIRE_NETNS").as_deref() == Ok("1") {
        panic!("{msg}");
    }
    eprintln!("{msg}");
    false
}

/// A child process, killed (SIGKILL) and reaped on drop.
#[derive(Debug)]
pub struct Proc {
    /// The child.
    pub child: Child,
    /// Its name, for messages.
    pub name: &'static str,
}

impl Proc {
    /// Sends a signal by name (`-INT`, `-TERM`, `-KILL`, `-STOP`, `-CONT`).
    pub fn signal(&self, sig: &str) {
        let _ = Command::new("kill").args([sig, &self.child.id().to_string()]).status();
    }
    /// Waits up to `timeout` for the exit; its code (-1 for a signal), or `None` if still running.
    pub fn wait(&mut self, timeout: Duration) -> Option<i32> {
        poll(timeout, || self.child.try_wait().ok().flatten().map(|s| s.code().unwrap_or(-1)))
    }
    /// Sends SIGINT and waits up to `timeout` for the exit code.
    pub fn interrupt(&mut self, timeout: Duration) -> Option<i32> {
        self.signal("-INT");
        self.wait(timeout)
    }
    /// Kills (SIGKILL) and reaps it now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Polls `f` every 2 ms until it returns `Some`, up to `timeout`.
pub fn poll<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A binary of the workspace beside the running test (`target/<profile>/<name>`); panics with
/// `build_hint` (the cargo command that builds it) when it is not built.
pub fn workspace_bin(name: &str, build_hint: &str) -> PathBuf {
    // target/<profile>/deps/<test> → target/<profile>/<name>
    let exe = std::env::current_exe().expect("test exe");
    let p = exe.parent().and_then(Path::parent).expect("target dir").join(name);
    assert!(p.exists(), "{} is not built: {build_hint} first", p.display());
    p
}
