//! Options back to a command line: what a parent gives its worker processes (`run --workers`).
//!
//! The one source is the options struct itself: [`to_command_line`] serialises it and writes
//! each field as its clap long flag (`link_silent_s` → `--link-silent-s`), so an option added to
//! [`RunArgs`] reaches the workers with nothing written by hand. The words are the ones the
//! flags parse: the enums serialise to their snake_case words (`checked`, `mm_zstd`, `menu`),
//! which is what their parsers read; `--recovery-option` is written `KEY=VALUE`. The tests
//! check that every flag of `run` round-trips.

use serde::Serializer;
use serde_json::Value;

use super::run::RunArgs;

/// The flags of `options` (a struct serialised to a JSON object): `true` a bare flag, `false`
/// and absent values none, a list one flag per item, anything else the flag and its word.
pub fn to_command_line<T: serde::Serialize>(options: &T) -> Vec<String> {
    let Ok(Value::Object(fields)) = serde_json::to_value(options) else {
        panic!("options serialise to a JSON object");
    };
    let mut line = Vec::new();
    for (name, value) in fields {
        let flag = format!("--{}", name.replace('_', "-"));
        match value {
            Value::Bool(true) => line.push(flag),
            Value::Bool(false) | Value::Null => {}
            Value::Array(items) => {
                for item in items {
                    line.extend([flag.clone(), word(item)]);
                }
            }
            other => line.extend([flag, word(other)]),
        }
    }
    line
}

/// A value as a command-line word: a string as itself, a number as JSON writes it (the
/// shortest text that parses back to the same `f64`).
fn word(value: Value) -> String {
    match value {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// `--recovery-option` pairs as the flag reads them: `KEY=VALUE`.
pub fn kv_words<S: Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(pairs.iter().map(|(k, v)| format!("{k}={v}")))
}

/// The command line of a worker of `run`: `run` and every option of `a`.
pub fn run_command_line(a: &RunArgs) -> Vec<String> {
    let mut line = vec!["run".to_string()];
    line.extend(to_command_line(a));
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    /// `run`'s options alone, as clap parses them.
    #[derive(Debug, Parser)]
    struct Run {
        #[command(flatten)]
        a: RunArgs,
    }

    /// Every option of `run` set to a value other than its default.
    #[rustfmt::skip]
    const EVERY_OPTION: &[&str] = &[
        "--scenario", "a.json", "--scenario", "dir b",
        "--model", "m.toml",
        "--mode", "visual",
        "--out", "out dir",
        "--maps", "maps",
        "--workers", "3",
        "--concurrent", "4",
        "--profile", "simulator",
        "--world", "link",
        "--link-host", "127.0.0.2",
        "--link-port", "6000",
        "--link-silent-s", "0.1",
        "--link-fingerprint", "AA:BB", "--link-fingerprint", "CC:DD",
        "--link-trust", "trust.txt",
        "--link-insecure",
        "--link-sweeps", "f32_zstd",
        "--view",
        "--view-port", "8080",
        "--no-game",
        "--pace", "2.5",
        "--operator",
        "--recovery-mode", "menu",
        "--recovery-option", "hold_s=3", "--recovery-option", "b=x=y",
        "--think-s", "0.30000000000000004",
        "--seed", "18446744073709551615",
        "--record", "interface",
        "--cache", "cache",
        "--probe",
        "--quiet",
        "--child",
        "--gate-file", "gate",
        "--probe-verdicts", "{\"tools\":\"pass\",\"pictures\":\"warn\"}",
    ];

    fn parse(line: &[String]) -> RunArgs {
        Run::try_parse_from(std::iter::once("run".to_string()).chain(line.iter().cloned()))
            .unwrap_or_else(|e| panic!("{line:?}: {e}"))
            .a
    }

    #[test]
    fn every_option_round_trips() {
        let full = parse(&EVERY_OPTION.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let line = to_command_line(&full);
        assert_eq!(parse(&line), full, "{line:?}");
        // So does the default of every option that has one.
        let least = parse(&["--scenario".into(), "a.json".into(), "--out".into(), "o".into()]);
        assert_eq!(parse(&to_command_line(&least)), least);
    }

    #[test]
    fn the_round_trip_sets_every_flag_of_run() {
        let cmd = Run::command();
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if long == "help" {
                continue;
            }
            let flag = format!("--{long}");
            assert!(EVERY_OPTION.contains(&flag.as_str()), "{flag} is not set by EVERY_OPTION");
        }
        let full = parse(&EVERY_OPTION.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let line = to_command_line(&full);
        for flag in EVERY_OPTION.iter().filter(|w| w.starts_with("--")) {
            assert!(line.iter().any(|w| w == flag), "{flag} is not written back: {line:?}");
        }
    }
}
