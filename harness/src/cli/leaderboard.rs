//! `acres-harness leaderboard DIR...`: merges the sweep folders of many shards and prints the
//! leaderboard (`harness/src/sweep/board.rs`): the table, or `--json`, `--csv`, `--markdown`
//! (each to stdout without a file, or to the file given), and the cost-vs-success picture
//! (`--svg FILE`, `--png FILE`).
//!
//! ```text
//! acres-harness leaderboard sweeps/a sweeps/b --json board.json --png board.png
//! ```
//!
//! Duplicates and missing runs are listed by id on stderr and make the exit code 1 (after every
//! output is written); no finished run at all is exit 2.

use std::path::{Path, PathBuf};

use clap::Args;

use super::Failure;
use crate::sweep::board::{self, Merge};
use crate::sweep::chart;

/// Options of `leaderboard`.
#[derive(Debug, Clone, Args)]
pub struct LeaderboardArgs {
    /// Sweep output folders (shards).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The JSON (to FILE, or stdout without one).
    #[arg(long, num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// The CSV (to FILE, or stdout without one).
    #[arg(long, num_args = 0..=1, default_missing_value = "-")]
    pub csv: Option<PathBuf>,
    /// The Markdown table (to FILE, or stdout without one).
    #[arg(long, num_args = 0..=1, default_missing_value = "-")]
    pub markdown: Option<PathBuf>,
    /// The cost-vs-success picture as SVG.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// The cost-vs-success picture as PNG.
    #[arg(long)]
    pub png: Option<PathBuf>,
    /// Put the wall time per run in the JSON too (then equal sweeps differ in it).
    #[arg(long)]
    pub wall: bool,
}

fn put(target: &Path, text: &[u8]) -> Result<bool, Failure> {
    if target == Path::new("-") {
        use std::io::Write;
        std::io::stdout().write_all(text).map_err(|e| Failure::env(format!("stdout: {e}")))?;
        return Ok(true);
    }
    if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Failure::env(format!("{}: {e}", parent.display())))?;
    }
    crate::sweep::exec::write_atomic(target, text)
        .map_err(|e| Failure::env(format!("{}: {e}", target.display())))?;
    Ok(false)
}

/// Runs the command.
pub fn run(a: LeaderboardArgs) -> Result<(), Failure> {
    for d in &a.dirs {
        if !d.is_dir() {
            return Err(Failure::input(format!("{}: no such folder", d.display())));
        }
    }
    let merge = Merge::load(&a.dirs);
    if merge.entries.is_empty() {
        return Err(Failure::input(format!(
            "leaderboard: no finished sweep run below {}",
            a.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
        )));
    }
    let groups = board::groups(&merge.entries);
    let mut printed = false;
    if let Some(t) = &a.json {
        let text =
            serde_json::to_string_pretty(&board::to_json(&merge, &groups, a.wall)).expect("json") + "\n";
        printed |= put(t, text.as_bytes())?;
    }
    if let Some(t) = &a.csv {
        printed |= put(t, board::format_csv(&groups).as_bytes())?;
    }
    if let Some(t) = &a.markdown {
        printed |= put(t, board::format_markdown(&groups).as_bytes())?;
    }
    if let Some(t) = &a.svg {
        put(t, chart::svg(&groups).as_bytes())?;
    }
    if let Some(t) = &a.png {
        put(t, &chart::png(&groups).map_err(Failure::input)?)?;
    }
    if !printed {
        print!("{}", board::format_table(&groups));
    }
    report(&merge)
}

/// Lists what the merge found on stderr; 1 for duplicates or missing runs.
fn report(m: &Merge) -> Result<(), Failure> {
    for (id, dirs) in &m.duplicates {
        let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        eprintln!("duplicate {id}: {}", list.join(", "));
    }
    for id in &m.missing {
        eprintln!("missing {id}");
    }
    for f in &m.unfinished {
        eprintln!("unfinished {}", f.display());
    }
    for (f, why) in &m.foreign {
        eprintln!("left out {}: {why}", f.display());
    }
    eprintln!(
        "{} runs; {} duplicate, {} missing, {} unfinished, {} left out",
        m.entries.len(),
        m.duplicates.len(),
        m.missing.len(),
        m.unfinished.len(),
        m.foreign.len()
    );
    if !m.duplicates.is_empty() || !m.missing.is_empty() {
        return Err(Failure::check(format!(
            "leaderboard: {} duplicate and {} missing runs",
            m.duplicates.len(),
            m.missing.len()
        )));
    }
    Ok(())
}
