//! `acres-harness leaderboard DIR...`: merges the sweep folders of many shards and prints the
//! leaderboard (`harness/src/sweep/board.rs`): the table, or `--json`, `--csv`, `--markdown`
//! (each to stdout without a file, or to the file given), and the cost-vs-success picture
//! (`--svg FILE`, `--png FILE`). `--compare A B` and `--baseline A` add paired comparisons
//! (`harness/src/sweep/compare.rs`) to every output form.
//!
//! ```text
//! acres-harness leaderboard sweeps/a sweeps/b --json board.json --png board.png
//! acres-harness leaderboard sweeps/a --compare scripted/scripted/text/vehicle classical/none/classical/vehicle
//! ```
//!
//! Duplicates and missing runs are listed by id on stderr and make the exit code 1 (after every
//! output is written); no finished run at all is exit 2.

use std::path::{Path, PathBuf};

use clap::Args;

use super::Failure;
use crate::sweep::board::{self, Merge};
use crate::sweep::chart;
use crate::sweep::compare::{self, Comparison};

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
    /// Compare group A with group B on runs paired by scenario and seed (keys
    /// `planner/model/mode/profile`, or `model/mode/profile` when one planner has it).
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub compare: Option<Vec<String>>,
    /// Compare every other group with this one (B of each comparison).
    #[arg(long, value_name = "KEY")]
    pub baseline: Option<String>,
}

/// The comparisons asked for: `--compare A B`, then each other group against `--baseline`.
fn comparisons(
    a: &LeaderboardArgs,
    merge: &Merge,
    groups: &[board::Group],
) -> Result<Vec<Comparison>, Failure> {
    let find = |k: &str| compare::resolve(k, groups).map_err(|e| Failure::input(format!("leaderboard: {e}")));
    let mut out = Vec::new();
    if let Some(pair) = &a.compare {
        out.push(compare::compare(&merge.entries, find(&pair[0])?, find(&pair[1])?));
    }
    if let Some(base) = &a.baseline {
        let b = find(base)?;
        for g in groups.iter().filter(|g| !std::ptr::eq(*g, b)) {
            out.push(compare::compare(&merge.entries, g, b));
        }
    }
    Ok(out)
}

/// A groups' text, and the comparisons' after an empty line when there are some.
fn with(groups_text: String, cs: &[Comparison], render: fn(&[&str], &[Vec<String>]) -> String) -> String {
    if cs.is_empty() {
        return groups_text;
    }
    groups_text + "\n" + &render(&compare::COLUMNS, &compare::rows(cs))
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
    let cs = comparisons(&a, &merge, &groups)?;
    let mut printed = false;
    if let Some(t) = &a.json {
        let text =
            serde_json::to_string_pretty(&board::to_json(&merge, &groups, &cs, a.wall)).expect("json") + "\n";
        printed |= put(t, text.as_bytes())?;
    }
    if let Some(t) = &a.csv {
        printed |= put(t, with(board::format_csv(&groups), &cs, board::render_csv).as_bytes())?;
    }
    if let Some(t) = &a.markdown {
        printed |= put(t, with(board::format_markdown(&groups), &cs, board::render_markdown).as_bytes())?;
    }
    if let Some(t) = &a.svg {
        put(t, chart::svg(&groups).as_bytes())?;
    }
    if let Some(t) = &a.png {
        put(t, &chart::png(&groups).map_err(Failure::input)?)?;
    }
    if !printed {
        print!("{}", with(board::format_table(&groups), &cs, board::render_table));
    }
    for c in &cs {
        for u in &c.unpaired {
            eprintln!("unpaired in {} vs {}: {} {}: {}", c.a.key, c.b.key, u.side, u.id, u.reason);
        }
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
