//! `acres-harness planners`: lists every planner with its kind, face and availability (a cheap
//! probe, see [`crate::agents::plugins`]); `--smoke` runs each planner on one shipped scenario
//! with no model and no network and prints one line per planner (exit 0 only when all pass).
//!
//! ```text
//! acres-harness planners [--json]
//! acres-harness planners --smoke [--scenario scenarios/t1_01_one_field.json] [--out DIR] [--json]
//! ```

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::run::{costs_dir, model_dir};
use super::{maps_dir, repo_root, Failure};
use crate::agents::plugins::smoke::{smoke_all, SmokeSetup};
use crate::agents::plugins::{agent_clis_on_path, list};

/// Options of `planners`.
#[derive(Debug, Clone, Args)]
pub struct PlannersArgs {
    /// Run each planner once on a shipped scenario (no model, no network).
    #[arg(long)]
    pub smoke: bool,
    /// The scenario of the smoke runs.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// The folder of the smoke runs (default: a new temporary folder, kept).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(a: PlannersArgs) -> Result<(), Failure> {
    if a.smoke {
        return smoke(&a);
    }
    let planners = list(&model_dir());
    let clis = agent_clis_on_path();
    if a.json {
        let clis: serde_json::Map<String, serde_json::Value> = clis
            .iter()
            .map(|(n, p)| (n.clone(), json!(p.as_ref().map(|p| p.display().to_string()))))
            .collect();
        let v = json!({"planners": planners, "agent_clis": clis});
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(());
    }
    println!("{:<24} {:<10} {:<20} {:<5} why", "planner", "kind", "face", "ready");
    for p in &planners {
        let ready = if p.available { "yes" } else { "no" };
        println!("{:<24} {:<10} {:<20} {:<5} {}", p.name, p.kind, p.face, ready, p.reason);
    }
    let found: Vec<String> =
        clis.iter().filter_map(|(n, p)| p.as_ref().map(|p| format!("{n} ({})", p.display()))).collect();
    let found = if found.is_empty() { "none".to_string() } else { found.join(", ") };
    println!("agent CLIs on PATH (for acres-harness mcp / agent): {found}");
    Ok(())
}

fn smoke(a: &PlannersArgs) -> Result<(), Failure> {
    let scenario =
        a.scenario.clone().unwrap_or_else(|| repo_root().join("scenarios").join("t1_01_one_field.json"));
    if !scenario.is_file() {
        return Err(Failure::input(format!("{}: no such scenario file", scenario.display())));
    }
    let out = match &a.out {
        Some(o) => o.clone(),
        None => std::env::temp_dir().join(format!("acres-planners-smoke-{}", std::process::id())),
    };
    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::env(format!("{}: cannot create: {e}", out.display())))?;
    let maps = maps_dir(std::slice::from_ref(&scenario));
    let setup = SmokeSetup { scenario, maps, costs: costs_dir(), out: out.clone() };
    let results = smoke_all(&setup).map_err(Failure::input)?;
    if a.json {
        let v = json!({"out": out.display().to_string(), "results": results});
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        for r in &results {
            println!(
                "{:<10} {:<6} {:<18} {:>6.2} s  {}",
                r.planner,
                if r.ok { "ok" } else { "FAILED" },
                r.end.as_deref().unwrap_or("-"),
                r.wall_s,
                if r.ok {
                    r.folder.as_ref().map(|f| f.display().to_string()).unwrap_or_default()
                } else {
                    r.detail.clone()
                }
            );
        }
    }
    let failed = results.iter().filter(|r| !r.ok).count();
    if failed > 0 {
        return Err(Failure::check(format!(
            "planners --smoke: {failed} of {} planners failed",
            results.len()
        )));
    }
    eprintln!("planners --smoke: all {} planners passed; runs in {}", results.len(), out.display());
    Ok(())
}
