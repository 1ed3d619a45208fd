//! What every node binary does at start: its `main` ([`node_main`]: `--ros-args`, logs, exit
//! codes), logs through `tracing` (level from `--log-level`, or `RUST_LOG`, else `info`;
//! ros2-client's `log` records are bridged), and a stop flag raised by SIGINT or SIGTERM.

use std::fmt::Display;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;

use crate::RosArgs;

/// The `main` of a node executable `exe`: parses the command line's `--ros-args` (node name
/// `default_name` unless remapped), starts the logs, runs `body` and maps its outcome to the exit
/// code: 0, or 2 with `exe: <error>` on stderr (bad arguments, bad parameters, bad input files,
/// a node that cannot start). `body` returns when the node stops (a signal: see [`Shutdown`]).
pub fn node_main<E: Display>(
    exe: &str,
    default_name: &str,
    body: impl FnOnce(RosArgs) -> Result<(), E>,
) -> ExitCode {
    let outcome = match RosArgs::parse(std::env::args(), default_name) {
        Ok(args) => {
            init_logging(args.log_level.as_deref());
            body(args).map_err(|e| format!("{e:#}"))
        }
        Err(e) => Err(e.to_string()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{exe}: {message}");
            ExitCode::from(2)
        }
    }
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
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
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
