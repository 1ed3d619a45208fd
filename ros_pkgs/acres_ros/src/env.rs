//! The ROS environment of a node: `ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE` and
//! `ROS_LOCALHOST_ONLY`, and the DDS participant they give.
//!
//! | variable | values | here |
//! | --- | --- | --- |
//! | `ROS_DOMAIN_ID` | 0..=232 | the DDS domain (RustDDS ignores the variable by itself) |
//! | `ROS_AUTOMATIC_DISCOVERY_RANGE` | `LOCALHOST`, `SUBNET`, `OFF`, `SYSTEM_DEFAULT` | `LOCALHOST` and `OFF` build a participant that uses only 127.0.0.1 |
//! | `ROS_LOCALHOST_ONLY` | `1` | the same as `LOCALHOST` (the variable of Humble and older) |
//!
//! With `LOCALHOST` the participant is built with only the loopback address
//! (`with_only_networks([127.0.0.1])`): it announces and listens on loopback only. That is how
//! every test runs (inside a private network namespace as well; see "Network safety" in `ARCHITECTURE.md`).

use std::net::{IpAddr, Ipv4Addr};

use ros2_client::dds::rustdds;
use thiserror::Error;

/// How far discovery reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryRange {
    /// Loopback only.
    Localhost,
    /// The local subnet (DDS's default).
    Subnet,
    /// No automatic discovery: treated as loopback only (no static peers are supported).
    Off,
}

/// A bad ROS environment variable.
#[derive(Debug, Error, PartialEq)]
pub enum EnvError {
    /// `ROS_DOMAIN_ID` out of range or not a number.
    #[error("ROS_DOMAIN_ID={0:?}: use a number from 0 to 232")]
    DomainId(String),
    /// An unknown discovery range.
    #[error("ROS_AUTOMATIC_DISCOVERY_RANGE={0:?}: use LOCALHOST, SUBNET, OFF or SYSTEM_DEFAULT")]
    Range(String),
}

/// The ROS environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RosEnv {
    /// The DDS domain.
    pub domain_id: u16,
    /// The discovery range.
    pub range: DiscoveryRange,
}

impl RosEnv {
    /// Reads the process environment.
    pub fn from_env() -> Result<RosEnv, EnvError> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// Reads variables through `get` (tests pass a map).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<RosEnv, EnvError> {
        let domain_id = match get("ROS_DOMAIN_ID").filter(|s| !s.trim().is_empty()) {
            None => 0,
            Some(s) => match s.trim().parse::<u16>() {
                Ok(d) if d <= 232 => d,
                _ => return Err(EnvError::DomainId(s)),
            },
        };
        let range = match get("ROS_AUTOMATIC_DISCOVERY_RANGE").filter(|s| !s.is_empty()) {
            Some(r) => match r.to_ascii_uppercase().as_str() {
                "LOCALHOST" => DiscoveryRange::Localhost,
                "SUBNET" | "SYSTEM_DEFAULT" => DiscoveryRange::Subnet,
                "OFF" => DiscoveryRange::Off,
                _ => return Err(EnvError::Range(r)),
            },
            None if get("ROS_LOCALHOST_ONLY").as_deref() == Some("1") => DiscoveryRange::Localhost,
            None => DiscoveryRange::Subnet,
        };
        Ok(RosEnv { domain_id, range })
    }

    /// True when the participant may use only loopback.
    pub fn loopback_only(&self) -> bool {
        matches!(self.range, DiscoveryRange::Localhost | DiscoveryRange::Off)
    }

    /// The DDS participant for this environment.
    pub fn participant(&self) -> Result<rustdds::DomainParticipant, rustdds::dds::CreateError> {
        let mut b = rustdds::DomainParticipantBuilder::new(self.domain_id);
        if self.loopback_only() {
            b = b.with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        }
        b.build()
    }
}

/// The network interfaces of this process's network namespace. It reads `/proc/self/net/dev`:
/// `/sys/class/net` shows the namespace that mounted `/sys`, which `unshare -n` does not change.
pub fn namespace_interfaces() -> Vec<String> {
    std::fs::read_to_string("/proc/self/net/dev")
        .unwrap_or_default()
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next().map(|n| n.trim().to_string()))
        .collect()
}

/// True when `lo` is the only interface of this process's network namespace: the NETWORK SAFETY
/// gate that every test, script and benchmark starting DDS participants passes first (they run
/// under `unshare -n`; see ARCHITECTURE.md, "Network safety").
pub fn in_loopback_only_netns() -> bool {
    namespace_interfaces() == ["lo"]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(vars: &[(&str, &str)]) -> Result<RosEnv, EnvError> {
        let m: BTreeMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        RosEnv::from_vars(|k| m.get(k).cloned())
    }

    #[test]
    fn discovery_range_and_domain_as_ros_reads_them() {
        assert_eq!(env(&[]), Ok(RosEnv { domain_id: 0, range: DiscoveryRange::Subnet }));
        assert_eq!(env(&[("ROS_LOCALHOST_ONLY", "1")]).unwrap().range, DiscoveryRange::Localhost);
        let e = env(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "localhost"), ("ROS_DOMAIN_ID", "42")]).unwrap();
        assert_eq!(e, RosEnv { domain_id: 42, range: DiscoveryRange::Localhost });
        assert!(e.loopback_only());
        // The newer variable wins over the older one.
        assert_eq!(
            env(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET"), ("ROS_LOCALHOST_ONLY", "1")]).unwrap().range,
            DiscoveryRange::Subnet
        );
        assert_eq!(env(&[("ROS_DOMAIN_ID", "233")]), Err(EnvError::DomainId("233".into())));
        assert_eq!(env(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "LAN")]), Err(EnvError::Range("LAN".into())));
    }
}
