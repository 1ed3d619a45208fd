//! The planner plugins (`acres-harness planners`): every planner the harness can put in the
//! planner's seat, each with a kind, a face and a cheap availability probe, and a smoke run of
//! each that needs no model and no network ([`smoke`]).
//!
//! The probe is cheap and never leaves the machine: the built-in planners and the agent faces
//! are always there; a model file needs its `api_key_env` variable set (its NAME is reported,
//! never its value) and, when its `base_url` is on 127.0.0.1 or localhost, a server that takes a
//! TCP connection within [`PROBE_TIMEOUT_S`]. A remote `base_url` is never connected to: it is
//! reported "not probed (remote)".

pub mod smoke;
mod smoke_mcp;

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::planners::models::config::{list as list_model_files, ModelConfig, Provider};

/// The longest TCP connect of the probe of a local model server, s.
pub const PROBE_TIMEOUT_S: f64 = 0.3;

/// The agent CLIs the listing looks for on `PATH` (information only).
pub const AGENT_CLIS: [&str; 4] = ["claude", "codex", "gemini", "opencode"];

/// One planner of the listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannerEntry {
    /// The planner's name (`scripted`, `classical`, a model file's name, `mcp`, `agent`).
    pub name: String,
    /// `scripted`, `classical`, `model` or `agent` (the run row's planner kind).
    pub kind: String,
    /// How it is reached: `in-process`, the provider (`openai`, `anthropic`, `scripted`),
    /// `mcp-stdio mcp-http`, `line`.
    pub face: String,
    /// The model file, for a model planner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The probe said it can run now.
    pub available: bool,
    /// Why (never a secret value).
    pub reason: String,
}

/// Every planner: the built-in ones, each model file of `model_dir` (sorted by name), the faces.
pub fn list(model_dir: &Path) -> Vec<PlannerEntry> {
    let built_in = |name: &str, kind: &str, face: &str, reason: &str| PlannerEntry {
        name: name.into(),
        kind: kind.into(),
        face: face.into(),
        file: None,
        available: true,
        reason: reason.into(),
    };
    let mut out = vec![
        built_in("scripted", "scripted", "in-process", "built in (the scripted stand-in, no model)"),
        built_in("classical", "classical", "in-process", "built in (the rule set of mode classical)"),
    ];
    for (name, file, cfg) in list_model_files(model_dir) {
        // The model file of the built-in scripted planner is that planner, not a second one.
        if name == "scripted" && cfg.as_ref().is_ok_and(|c| c.provider == Provider::Scripted) {
            out[0].file = Some(file.display().to_string());
            continue;
        }
        let (kind, face, available, reason) = match cfg {
            Ok(c) => {
                let (ok, why) = probe(&c);
                let kind = if c.provider == Provider::Scripted { "scripted" } else { "model" };
                (kind.to_string(), c.provider.as_str().to_string(), ok, why)
            }
            Err(e) => ("model".into(), "?".into(), false, format!("invalid model file: {e}")),
        };
        out.push(PlannerEntry {
            name,
            kind,
            face,
            file: Some(file.display().to_string()),
            available,
            reason,
        });
    }
    out.push(built_in(
        "mcp",
        "agent",
        "mcp-stdio mcp-http",
        "built in (acres-harness mcp: stdio, or streamable HTTP on 127.0.0.1)",
    ));
    out.push(built_in("agent", "agent", "line", "built in (acres-harness agent serve: a Unix socket)"));
    out
}

/// The probe of one model file: (available, why). Never prints a key's value.
pub fn probe(c: &ModelConfig) -> (bool, String) {
    if c.provider == Provider::Scripted {
        return (true, "built in (provider scripted, no network)".into());
    }
    let mut why = Vec::new();
    if let Some(var) = &c.api_key_env {
        let set = std::env::var(var).is_ok_and(|v| !v.trim().is_empty());
        if !set {
            return (false, format!("the key variable {var} is not set"));
        }
        why.push(format!("the key variable {var} is set"));
    }
    let url = c.base_url();
    let ok = match loopback_addr(&url) {
        Some(addr) => {
            let up = TcpStream::connect_timeout(&addr, Duration::from_secs_f64(PROBE_TIMEOUT_S)).is_ok();
            why.push(if up { format!("{addr} takes connections") } else { format!("no server at {addr}") });
            up
        }
        None => {
            why.push(format!("{} not probed (remote)", host_of(&url)));
            true
        }
    };
    (ok, why.join("; "))
}

/// The host (and port) of a URL: what is between `://` and the next `/`.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

/// The socket address of a URL whose host is 127.0.0.1, localhost or [::1] (with the scheme's
/// default port when none is given); `None` for any other host (never resolved).
pub fn loopback_addr(url: &str) -> Option<SocketAddr> {
    let hostport = host_of(url);
    let hostport = hostport.rsplit_once('@').map_or(hostport, |(_, h)| h);
    let (host, port) = if let Some(rest) = hostport.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    let port: u16 = match port {
        Some(p) => p.parse().ok()?,
        None if url.starts_with("https://") => 443,
        None => 80,
    };
    let ip: std::net::IpAddr = match host.to_ascii_lowercase().as_str() {
        "localhost" | "127.0.0.1" => [127, 0, 0, 1].into(),
        "::1" => std::net::Ipv6Addr::LOCALHOST.into(),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// Which agent CLIs of [`AGENT_CLIS`] are on `PATH`, with their paths.
pub fn agent_clis_on_path() -> Vec<(String, Option<PathBuf>)> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    AGENT_CLIS
        .iter()
        .map(|name| {
            let found = std::env::split_paths(&path).map(|d| d.join(name)).find(|p| is_executable(p));
            (name.to_string(), found)
        })
        .collect()
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_have_an_address() {
        assert_eq!(loopback_addr("http://127.0.0.1:8000/v1"), Some("127.0.0.1:8000".parse().unwrap()));
        assert_eq!(loopback_addr("http://localhost/v1"), Some("127.0.0.1:80".parse().unwrap()));
        assert_eq!(loopback_addr("http://[::1]:9/v1"), Some("[::1]:9".parse().unwrap()));
        assert_eq!(loopback_addr("https://api.openai.com/v1"), None);
        assert_eq!(loopback_addr("http://127.0.0.1.example.com:80/"), None);
        assert_eq!(loopback_addr("http://10.0.0.1:8000/v1"), None);
    }
}
