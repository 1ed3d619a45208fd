//! What both backends' nodes share: the errors, the request/reply framing parameter, the
//! resolution of topic names (namespace and `-r` remaps of [`RosArgs`]), and time stamps.

use thiserror::Error;

use crate::args::{ArgsError, RosArgs};
use crate::env::EnvError;

/// Why a node or one of its endpoints could not be made.
#[derive(Debug, Error)]
pub enum NodeError {
    /// A bad ROS argument or parameter.
    #[error(transparent)]
    Args(#[from] ArgsError),
    /// A bad ROS environment variable.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// A bad name.
    #[error("bad ROS name {name:?}: {reason}")]
    Name {
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
    /// DDS refused.
    #[error("DDS: {0}")]
    Dds(String),
    /// The operating system refused what waiting for samples needs (an epoll set, an eventfd).
    #[error("cannot wait for samples: {0}")]
    Wait(#[from] std::io::Error),
}

/// The request/reply framing of services and actions, which differs per RMW.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// rmw_fastrtps (and RustDDS peers): the "Enhanced" mapping of DDS-RPC.
    FastRtps,
    /// rmw_cyclonedds: request id in the payload.
    CycloneDds,
}

impl Framing {
    /// From the parameter's words `fastrtps` / `cyclonedds`.
    pub fn parse(word: &str) -> Result<Framing, ArgsError> {
        match word {
            "fastrtps" => Ok(Framing::FastRtps),
            "cyclonedds" => Ok(Framing::CycloneDds),
            other => Err(ArgsError::ParamType {
                name: "rmw_framing".into(),
                expected: "fastrtps or cyclonedds",
                got: crate::args::ParamValue::String(other.into()),
            }),
        }
    }
}

/// The fully qualified name of `topic`: relative names are in the node's namespace; a remap
/// rule matches the qualified name (or the name as written) and its target is resolved too.
pub fn resolve(args: &RosArgs, topic: &str) -> String {
    let qualify = |t: &str| {
        if t.starts_with('/') {
            t.to_string()
        } else {
            format!("{}/{t}", args.namespace.trim_end_matches('/'))
        }
    };
    let full = qualify(topic);
    let target = args.remaps.get(&full).or_else(|| args.remaps.get(topic));
    target.map_or(full, |t| qualify(t))
}

/// Seconds since the Unix epoch.
pub fn wall_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// A ROS time stamp from seconds.
pub fn stamp(t_s: f64) -> acres_msgs::builtin_interfaces::Time {
    let t = t_s.max(0.0);
    let sec = t.floor();
    acres_msgs::builtin_interfaces::Time {
        sec: sec as i32,
        nanosec: (((t - sec) * 1e9) as u32).min(999_999_999),
    }
}
