//! The metering proxy's file of a run folder: `proxy.jsonl`, one [`ProxyCallRow`] a line, each a
//! model call an external agent made through `acres-harness proxy` (its tokens, cost and
//! latency). `score` adds them to the run's tokens and USD; `validate` checks each line.
//!
//! The file is the proxy's, not the loop's: its rows have no mission time (the agent's model
//! calls happen while the agent thinks, which the loop already charges as thinking time), and
//! they are numbered in the order the calls arrived, written when each call has ended.
//!
//! ```
//! use acres_harness::runfolder::proxy::{ProxyCallRow, read_rows};
//! let line = r#"{"type":"proxy_call","call":1,"wall":1.7e9,"protocol":"anthropic","path":"/v1/messages","model":"m","stream":false,"status":200,"latency_s":0.2,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_tokens":0,"cache_write_tokens":0},"usd":0.00003,"priced_by":"m","error":null}"#;
//! let row = ProxyCallRow::decode(line).unwrap();
//! assert_eq!(row.usage.output_tokens, 5);
//! assert_eq!(ProxyCallRow::decode(&row.encode()).unwrap(), row);
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::rows::{nullable, Usage};

/// The file of the proxy's rows inside a run folder.
pub const PROXY_FILE: &str = "proxy.jsonl";

/// The protocols the proxy meters.
pub const PROTOCOLS: [&str; 3] = ["openai-chat", "openai-responses", "anthropic"];

/// One model call relayed by the proxy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyCallRow {
    /// The call number, from 1, in the order the calls arrived.
    pub call: u64,
    /// Wall time the call arrived, UNIX seconds.
    pub wall: f64,
    /// `openai-chat`, `openai-responses` or `anthropic` (from the path).
    pub protocol: String,
    /// The path asked (`/v1/messages`).
    pub path: String,
    /// The model the request named, or null.
    #[serde(deserialize_with = "nullable")]
    pub model: Option<String>,
    /// Whether the answer was a stream of server-sent events.
    pub stream: bool,
    /// The upstream's HTTP status (502 when it could not be reached).
    pub status: u16,
    /// From the request's arrival to the answer's last byte, s.
    pub latency_s: f64,
    /// The token counts the upstream reported.
    pub usage: Usage,
    /// The cost at the prices of the model file named in `priced_by`, USD (0 without one).
    pub usd: f64,
    /// The model file whose prices gave `usd`, or null.
    #[serde(deserialize_with = "nullable")]
    pub priced_by: Option<String>,
    /// Why the call gave no answer, or null (secrets removed).
    #[serde(deserialize_with = "nullable")]
    pub error: Option<String>,
}

/// A line of `proxy.jsonl`, tagged by `"type"` as the rows of `run.jsonl` are.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ProxyLine {
    ProxyCall(ProxyCallRow),
}

impl ProxyCallRow {
    /// The row as one JSON line (no newline), `"type": "proxy_call"` first.
    pub fn encode(&self) -> String {
        serde_json::to_string(&ProxyLine::ProxyCall(self.clone())).expect("a proxy row always serializes")
    }

    /// One line decoded; unknown keys and types are refused.
    pub fn decode(line: &str) -> Result<Self, String> {
        match serde_json::from_str(line).map_err(|e| e.to_string())? {
            ProxyLine::ProxyCall(r) => Ok(r),
        }
    }
}

/// The proxy's rows of a run folder: `Ok(empty)` without a `proxy.jsonl`; else each line decoded
/// and checked, or the problems as `(line from 1, message)`: a line that does not decode, a call
/// number seen twice, a negative or non-finite latency or cost, an unknown protocol.
pub fn read_rows(folder: &Path) -> Result<Vec<ProxyCallRow>, Vec<(usize, String)>> {
    let Ok(text) = std::fs::read_to_string(folder.join(PROXY_FILE)) else { return Ok(Vec::new()) };
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let row = match ProxyCallRow::decode(line) {
            Ok(r) => r,
            Err(e) => {
                problems.push((n, format!("not a proxy_call row: {e}")));
                continue;
            }
        };
        if !seen.insert(row.call) {
            problems.push((n, format!("call {} appears twice", row.call)));
        }
        if !PROTOCOLS.contains(&row.protocol.as_str()) {
            problems.push((n, format!("unknown protocol {:?}; expected one of {PROTOCOLS:?}", row.protocol)));
        }
        for (what, v) in [("latency_s", row.latency_s), ("usd", row.usd), ("wall", row.wall)] {
            if !(v.is_finite() && v >= 0.0) {
                problems.push((n, format!("{what} = {v} is not a finite number >= 0")));
            }
        }
        rows.push(row);
    }
    if problems.is_empty() {
        Ok(rows)
    } else {
        Err(problems)
    }
}

/// The tokens and cost of the proxy's rows: `(usage, usd, calls)`.
pub fn totals(rows: &[ProxyCallRow]) -> (Usage, f64, u64) {
    let mut usage = Usage::default();
    let mut usd = 0.0;
    for r in rows {
        usage += r.usage;
        usd += r.usd;
    }
    (usage, usd, rows.len() as u64)
}
