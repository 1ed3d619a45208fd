//! `acres-harness tools`: prints the tool definitions of a mode in the shape of one tool-calling
//! API (see [`crate::tools::export`] for the styles and the strict-mode rules).
//!
//! ```text
//! acres-harness tools --style openai --mode checked
//! acres-harness tools --style anthropic --mode text --profile simulator --operator
//! acres-harness tools --style mcp
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
}

/// Prints the definitions as one JSON array.
pub fn run(a: ToolsArgs) -> Result<(), Failure> {
    if a.mode == Mode::Classical {
        return Err(Failure::input("tools --mode classical: the classical planner has no tools"));
    }
    let tools = crate::tools::tools_for(a.mode, a.profile, a.operator);
    let out = export(&tools, a.style);
    println!("{}", serde_json::to_string_pretty(&out).map_err(|e| Failure::input(e.to_string()))?);
    Ok(())
}
