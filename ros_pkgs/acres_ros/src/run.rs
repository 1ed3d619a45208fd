//! What every node binary does at start: its `main` ([`node_main`]: `--ros-args`, logs, exit
//! codes), logs through `tracing` (level from `--log-level`, or `RUST_LOG`, else `info`;
//! ros2-client's `log` records are bridged), and a stop flag raised by SIGINT or SIGTERM.

use std::fmt::Display;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// Installs the log subscriber (stderr).
pub fn init_logging(level: Option<&str>) {
    let filter = match level {
        Some(l) => tracing_subscriber::EnvFilter::new(format!(
            "{l},rustdds=off,ros2_client=warn,ros2_client::service::wrappers=error"
        )),
        None => tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
            tracing_subscriber::EnvFilter::new(
                "info,rustdds=off,ros2_client=warn,ros2_client::service::wrappers=error",
            )
        }),
    };
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
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
