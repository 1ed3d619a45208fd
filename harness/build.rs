//! Embeds the git commit of the checkout (if any) as `ACRES_COMMIT`, for the run row's identity.

use std::process::Command;

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    println!("cargo:rerun-if-changed={}", root.join(".git/HEAD").display());
    println!("cargo:rerun-if-changed={}", root.join(".git/refs/heads").display());
    let out = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).current_dir(&root).output();
    if let Ok(o) = out {
        let commit = String::from_utf8_lossy(&o.stdout).trim().to_string();
        if o.status.success() && !commit.is_empty() && commit.chars().all(|c| c.is_ascii_hexdigit()) {
            println!("cargo:rustc-env=ACRES_COMMIT={commit}");
        }
    }
}
