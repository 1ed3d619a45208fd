//! What every node binary does at start: its `main` ([`node_main`]: `--ros-args`, logs, exit
//! codes), logs through `tracing` (level from `--log-level`, or `RUST_LOG`, else `info`;
//! ros2-client's `log` records are bridged; colour only on a terminal and never with `NO_COLOR`,
//! so `ros2 launch`'s log files and captured logs carry no escape sequences), and a stop flag
//! raised by SIGINT or SIGTERM.

use std::error::Error;
use std::fmt::Display;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;

use crate::RosArgs;

/// A node could not start for a reason of the machine, not of its input: DDS refused, a port
/// that cannot be bound, a signal handler that cannot be installed (exit code 3).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Environment(pub String);

/// The exit code of a failure of the environment (the project's contract: 0 ok, 1 a failed
/// check, 2 bad input, 3 the environment).
pub const EXIT_ENVIRONMENT: u8 = 3;

/// The `main` of a node executable `exe`: parses the command line's `--ros-args` (node name
/// `default_name` unless remapped), starts the logs, runs `body` and maps its outcome to the exit
/// code: 0; 3 with `exe: <error>` on stderr when an [`Environment`] error is in the error's
/// chain (DDS refused, a port in use); else 2 (bad arguments, bad parameters, bad input files).
/// `body` returns when the node stops (a signal: see [`Shutdown`]).
pub fn node_main<E>(exe: &str, default_name: &str, body: impl FnOnce(RosArgs) -> Result<(), E>) -> ExitCode
where
    E: Display + AsRef<dyn Error + Send + Sync + 'static>,
{
    let outcome = match RosArgs::parse(std::env::args(), default_name) {
        Ok(args) => {
            init_logging(args.log_level.as_deref());
            body(args).map_err(|e| {
                let mut cause: Option<&(dyn Error + 'static)> = Some(e.as_ref());
                let mut env = false;
                while let Some(c) = cause {
                    env |= c.is::<Environment>();
                    cause = c.source();
                }
                (format!("{e:#}"), if env { EXIT_ENVIRONMENT } else { 2 })
            })
        }
        Err(e) => Err((e.to_string(), 2)),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err((message, code)) => {
            eprintln!("{exe}: {message}");
            ExitCode::from(code)
        }
    }
}

/// True when log lines may carry colour: stderr is a terminal and `NO_COLOR` is unset or empty
/// (<https://no-color.org>).
pub fn log_colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The filter when neither `--log-level` nor `RUST_LOG` says otherwise.
const QUIET_DDS: &str = "rustdds=off,ros2_client=warn,ros2_client::service::wrappers=error";

/// Installs the log subscriber (stderr). `level` (a node's `--log-level`) comes first, then
/// `RUST_LOG`, then `info`; the DDS crates stay quiet unless `RUST_LOG` names them. The filter is
/// `target=level` directives (tracing-subscriber's `Targets`: no regex engine in the nodes).
pub fn init_logging(level: Option<&str>) {
    let spec = match (level, std::env::var("RUST_LOG")) {
        (Some(l), _) => format!("{l},{QUIET_DDS}"),
        (None, Ok(env)) if !env.trim().is_empty() => env,
        (None, _) => format!("info,{QUIET_DDS}"),
    };
    let filter = spec.parse::<Targets>().unwrap_or_else(|e| {
        eprintln!("the log filter {spec:?} is not `target=level,...` ({e}): logging at info");
        format!("info,{QUIET_DDS}").parse().expect("the default filter parses")
    });
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(log_colour()))
        .with(filter)
        .try_init();
}

/// A flag that SIGINT and SIGTERM raise; the node's loop ends when it is set.
#[derive(Debug, Clone)]
pub struct Shutdown(Arc<AtomicBool>);

impl Shutdown {
    /// Installs the signal handler (once per process).
    pub fn install() -> Result<Shutdown, ctrlc::Error> {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        ctrlc::set_handler(move || f.store(true, Ordering::SeqCst))?;
        Ok(Shutdown(flag))
    }

    /// True once a signal arrived.
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
