//! `acres-harness tools`: prints the tool definitions of a mode in the shape of one tool-calling
//! API (see [`crate::tools::export`] for the styles and the strict-mode rules).
//!
//! ```text
//! acres-harness tools --style openai --mode checked
//! acres-harness tools --style anthropic --mode text --profile simulator --operator
//! acres-harness tools --style mcp
//! acres-harness tools --style openai --scenario scenarios/learned/edge_pass_f55.json
//! ```

use clap::Args;

use super::run::{parse_mode, parse_profile};
use super::Failure;
use crate::runfolder::rows::{Mode, Profile};
use crate::tools::export::{export, Style};

/// Options of `tools`.
#[derive(Debug, Clone, Args)]
pub struct ToolsArgs {
    /// The API shape: openai, openai-responses, anthropic or mcp.
    #[arg(long, value_enum)]
    pub style: Style,
    /// The mode whose tools to print: text, visual or checked (classical has none).
    #[arg(long, default_value = "checked", value_parser = parse_mode)]
    pub mode: Mode,
    /// vehicle or simulator (the simulator profile's `read` also takes `objects`).
    #[arg(long, default_value = "vehicle", value_parser = parse_profile)]
    pub profile: Profile,
    /// Include the tool ask_operator.
    #[arg(long)]
    pub operator: bool,
    /// A scenario whose learned skills (its `skills`) are added as tools.
    #[arg(long)]
    pub scenario: Option<std::path::PathBuf>,
    /// The maps folder of --scenario (default: as `run` finds it: `maps` beside the scenario
    /// file, else `scenarios/maps`).
    #[arg(long)]
    pub maps: Option<std::path::PathBuf>,
}

/// Prints the definitions as one JSON array.
pub fn run(a: ToolsArgs) -> Result<(), Failure> {
    if a.mode == Mode::Classical {
        return Err(Failure::input("tools --mode classical: the classical planner has no tools"));
    }
    let mut tools = crate::tools::tools_for(a.mode, a.profile, a.operator);
    if let Some(file) = &a.scenario {
        let maps = a.maps.clone().unwrap_or_else(|| super::maps_dir(std::slice::from_ref(file)));
        let sc = crate::scenario::load(file, &maps).map_err(|e| Failure::input(e.to_string()))?;
        let skills =
            acres_vehicle::learned::scenario_skills(&sc).map_err(|e| Failure::input(e.to_string()))?;
        tools.extend(crate::tools::learned_tools(&skills));
    }
    let out = export(&tools, a.style);
    println!("{}", serde_json::to_string_pretty(&out).map_err(|e| Failure::input(e.to_string()))?);
    Ok(())
}
