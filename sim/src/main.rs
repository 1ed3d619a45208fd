//! `acres-sim`: tools of ACRES Core without the harness.
//!
//! `acres-sim learn-costs [--map scenarios/maps/default.json] [--out scenarios/costs]` drives
//! every mission leg under every condition and writes the cost tables.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};

use acres_runtime::costs::table_file_name;
use acres_runtime::{Condition, Map};

#[derive(Parser)]
#[command(name = "acres-sim", about = "ACRES Core tools")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Drives every mission leg under every condition and writes the cost tables.
    LearnCosts {
        /// The map file.
        #[arg(long, default_value = "scenarios/maps/default.json")]
        map: PathBuf,
        /// The output folder (`ACRES_COST_TABLES` when set).
        #[arg(long, env = "ACRES_COST_TABLES", default_value = "scenarios/costs")]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acres-sim: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Cmd::LearnCosts { map, out } => {
            let m = Arc::new(Map::load(&map)?);
            std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
            for c in Condition::ALL {
                let t = acres_sim::learn::learn_table(&m, c)?;
                let file = out.join(table_file_name(&m.name, c.as_str()));
                std::fs::write(&file, t.to_json()).with_context(|| format!("writing {}", file.display()))?;
                println!("{}: {} legs", file.display(), t.legs.len());
            }
            Ok(())
        }
    }
}
