//! The `acres-harness` binary: parses the command line and hands it to the library.

#![warn(clippy::too_many_lines)]

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: the recording's writer thread frees what the loop's thread allocated, which
/// glibc's allocator serialises on a lock (measured: the loop's thread lost about 35 ms of a
/// 120 ms scripted run to it; `cargo bench -p acres-harness --bench recording`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    acres_harness::cli::main_with(acres_harness::cli::Cli::parse())
}
