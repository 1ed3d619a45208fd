//! The scenario key `local_planner`: which local planner drives `goto`, `scout` and
//! `return_home`.
//!
//! | value | planner |
//! | --- | --- |
//! | `"default"` (or absent) | the built-in driver |
//! | `"pure_pursuit"` | the in-tree pure pursuit planner |
//! | `"process:<program> [<argument> ...]"` | an external process speaking the line protocol of `docs/local-planner-protocol.md` |
//!
//! A process command is split at white space (no quoting, no shell). It runs in the scenario
//! file's folder; a program with a `/` is a path relative to that folder (and must exist), one
//! without is looked up on `PATH` (`python3`). Example:
//! `"process:python3 ../../examples/local_planner_plugin.py"`.

use std::path::{Path, PathBuf};

/// A checked value of `local_planner`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalPlannerKey {
    /// An in-tree planner by name (`default`, `pure_pursuit`).
    Builtin(String),
    /// A process plugin.
    Process(ProcessCommand),
}

/// The command of a process plugin, resolved against the scenario file's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessCommand {
    /// The value as the scenario gives it (`process:...`): the planner's name in causes.
    pub spec: String,
    /// The program: a path (resolved) or a name looked up on `PATH`.
    pub program: PathBuf,
    /// The arguments.
    pub args: Vec<String>,
    /// The folder the process runs in (the scenario file's).
    pub dir: PathBuf,
}

/// The in-tree planners' names.
pub const BUILTIN_PLANNERS: [&str; 2] = ["default", "pure_pursuit"];

/// The prefix of a process plugin's value.
pub const PROCESS_PREFIX: &str = "process:";

impl LocalPlannerKey {
    /// Reads a value of `local_planner` of the scenario file `file` and checks that a plugin
    /// program given as a path is a file; the error is the message of the fault at
    /// `local_planner`.
    pub fn check(value: &str, file: &Path) -> Result<LocalPlannerKey, String> {
        let key = Self::parse(value, file)?;
        if let LocalPlannerKey::Process(c) = &key {
            if c.program.components().count() > 1 && !c.program.is_file() {
                return Err(format!(
                    "the plugin program \"{}\" is not a file (looked for {})",
                    value[PROCESS_PREFIX.len()..].split_whitespace().next().unwrap_or(""),
                    c.program.display()
                ));
            }
        }
        Ok(key)
    }

    /// Reads a value of `local_planner` of the scenario file `file` (its form only).
    pub fn parse(value: &str, file: &Path) -> Result<LocalPlannerKey, String> {
        if BUILTIN_PLANNERS.contains(&value) {
            return Ok(LocalPlannerKey::Builtin(value.to_string()));
        }
        let Some(command) = value.strip_prefix(PROCESS_PREFIX) else {
            return Err(format!(
                "unknown local planner \"{value}\"; expected one of {}, or \"{PROCESS_PREFIX}<program> [<argument> ...]\"",
                BUILTIN_PLANNERS.join(", ")
            ));
        };
        let mut words = command.split_whitespace();
        let Some(program) = words.next() else {
            return Err(format!("\"{value}\" names no program after \"{PROCESS_PREFIX}\""));
        };
        let dir = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let program = if program.contains('/') { dir.join(program) } else { PathBuf::from(program) };
        Ok(LocalPlannerKey::Process(ProcessCommand {
            spec: value.to_string(),
            program,
            args: words.map(str::to_string).collect(),
            dir,
        }))
    }
}
