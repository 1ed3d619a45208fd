//! The `acres-harness` binary: parses the command line and hands it to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    acres_harness::cli::main_with(acres_harness::cli::Cli::parse())
}
