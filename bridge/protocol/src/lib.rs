//! The link between the bridge node (ROS 2 side) and the harness: one TCP connection, UTF-8
//! JSON, one object per line, every object with a `"type"`. This crate is the only code that
//! knows that format; the bridge node and the harness's link world both go through
//! [`encode`] and [`decode`]. `docs/link-protocol.md` has an example of every message.
//!
//! The conversation:
//!
//! 1. The harness connects; the bridge sends [`Hello`] (its protocol version, whether a token
//!    is needed, whether a simulator's truth is published).
//! 2. The harness sends [`Attach`] (its version, its nonce, the proof that it knows the token
//!    when one is set: [`auth`]). A version that differs, a proof that is wrong or missing, a
//!    nonce seen before (a replay), or a second harness while one is attached gets [`Refused`]
//!    (naming both versions, or the reason) and the socket is closed; nothing is executed.
//!    Otherwise the bridge sends [`Welcome`] (with its own proof when a token is set).
//!
//! Before all this, unless the link is plaintext on purpose, the socket speaks TLS 1.3 and the
//! harness pins the bridge's certificate by its fingerprint ([`tls`]).
//! 3. The bridge sends a [`Step`] for each observation of the vehicle (with the skill server's
//!    events since the last step), a [`Sweep`] line for each LiDAR sweep as it comes (stamped
//!    with its acquisition time; the harness pairs it with the step of that time), [`SkillReply`] to each
//!    [`SkillRequest`], and [`Pong`] to each [`Ping`]. The harness sends [`Beat`] every 0.2 s
//!    (the bridge publishes one heartbeat for each), [`Ping`] to measure the link, [`Cancel`],
//!    and [`End`] when it is done (the bridge then cancels every goal it sent).
//! 4. A line the bridge cannot read gets [`ErrorLine`] and the link stays usable; a line longer
//!    than [`MAX_LINE_BYTES`] is answered the same way and skipped.
//!
//! Points travel packed, in the encoding the harness chose in `attach` among those `hello`
//! offers ([`SweepEncoding`]: 1 mm deltas zstd-compressed, or lossless), base64 — never as JSON
//! numbers ([`Sweep::pack`], [`Sweep::unpack`]).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

#[cfg(feature = "secure")]
pub mod auth;
pub mod lines;
mod messages;
mod sweep;
#[cfg(feature = "secure")]
pub mod tls;

pub use lines::{read_bounded, BoundedLine};
pub use messages::*;
pub use sweep::{
    le_bytes, PackedSweep, Sweep, SweepEncoding, SweepError, BYTES_PER_POINT, FIELDS_PER_POINT,
    MAX_SWEEP_POINTS, RESOLUTION_M,
};

/// The protocol version, checked at `hello`/`attach`. Version 2: the observation carries the
/// route ahead, and a `geometry_msgs/Point` that is not given (an event's `hold_at`) is `null`
/// like every other float that is not given. Version 3: the token is checked by a
/// challenge–response ([`auth`]: nonces in `hello` and `attach`, proofs in `attach` and
/// `welcome`), never sent; the link runs over TLS ([`tls`]) unless it is plaintext on purpose.
/// Version 4: sweeps travel in `sweep` lines of their own as they come, stamped, in an encoding
/// negotiated at `hello` ([`SweepEncoding`]); a step carries none. A peer of another version
/// is refused, naming both versions.
pub const PROTOCOL_VERSION: u32 = 4;

/// The longest line either side reads, bytes (a 14,400-point sweep is about 310 kB as `f32`).
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// The socket buffer each side asks for, bytes: three step lines of a 14,400-point sweep (307 kB
/// each), so that one write hands a whole step to the operating system and the reader's side
/// can take it at once (the bridge's send buffer, the harness's receive buffer; the system may
/// cap it).
pub const SOCKET_BUFFER_BYTES: usize = 1 << 20;

/// The harness's beat period, s.
pub const BEAT_PERIOD_S: f64 = 0.2;

/// A ping without a pong for this long means the link is lost, s.
pub const PONG_TIMEOUT_S: f64 = 2.0;

/// The default TCP port of the bridge.
pub const DEFAULT_PORT: u16 = 5630;

/// A line that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LineError {
    /// The line is longer than [`MAX_LINE_BYTES`].
    #[error("the line has {len} bytes, more than the {max} a line may have")]
    Oversized {
        /// Its length, bytes.
        len: usize,
        /// The limit, bytes.
        max: usize,
    },
    /// Not a JSON object, or a field of the wrong type, or a missing or unknown field.
    #[error("malformed line: {0}")]
    Malformed(String),
    /// A `type` this side does not know.
    #[error("unknown message type \"{0}\"")]
    UnknownType(String),
}

impl LineError {
    /// The code of the [`ErrorLine`] that answers it.
    pub fn code(&self) -> ErrorCode {
        match self {
            LineError::Oversized { .. } => ErrorCode::Oversized,
            LineError::Malformed(_) => ErrorCode::Malformed,
            LineError::UnknownType(_) => ErrorCode::UnknownType,
        }
    }
}

/// Encodes one message as one line, with its `\n`.
pub fn encode<M: serde::Serialize>(msg: &M) -> String {
    let mut s = serde_json::to_string(msg).expect("link messages always serialize");
    s.push('\n');
    s
}

/// Encodes the `sweep` line of a sweep packed beforehand: the same line as [`encode`] of
/// [`FromBridge::Sweep`] of that sweep, with the sweep's text copied, not encoded again.
pub fn encode_sweep(sweep: &PackedSweep) -> String {
    let body = sweep.json().strip_prefix('{').expect("a packed sweep is a JSON object");
    let mut s = String::with_capacity(body.len() + 18);
    s.push_str("{\"type\":\"sweep\",");
    s.push_str(body);
    s.push('\n');
    s
}

/// Decodes one line (with or without its `\n`) as a message of one direction
/// ([`FromBridge`] or [`FromHarness`]).
pub fn decode<M: serde::de::DeserializeOwned>(line: &str) -> Result<M, LineError> {
    if line.len() > MAX_LINE_BYTES {
        return Err(LineError::Oversized { len: line.len(), max: MAX_LINE_BYTES });
    }
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    serde_json::from_str(line).map_err(|e| {
        let msg = e.to_string();
        match unknown_variant(&msg) {
            Some(t) => LineError::UnknownType(t),
            None => LineError::Malformed(msg),
        }
    })
}

/// The type named in serde's "unknown variant `x`" message.
fn unknown_variant(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("unknown variant `")?;
    Some(rest.split('`').next()?.to_string())
}

/// The refusal text of a version mismatch, naming both versions.
pub fn version_mismatch(bridge: u32, harness: u32) -> String {
    format!(
        "protocol version mismatch: the bridge speaks version {bridge}, the harness speaks version {harness}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_are_told_apart() {
        assert!(
            matches!(decode::<FromHarness>("{\"type\": \"fly\"}"), Err(LineError::UnknownType(t)) if t == "fly")
        );
        assert!(matches!(decode::<FromHarness>("not json"), Err(LineError::Malformed(_))));
        assert!(matches!(decode::<FromHarness>("{\"type\": \"beat\"}"), Err(LineError::Malformed(_))));
        assert!(matches!(
            decode::<FromHarness>("{\"type\": \"beat\", \"n\": 1, \"x\": 2}"),
            Err(LineError::Malformed(_))
        ));
        let long = format!("{{\"type\": \"beat\", \"n\": 1, \"pad\": \"{}\"}}", "x".repeat(MAX_LINE_BYTES));
        assert!(matches!(decode::<FromHarness>(&long), Err(LineError::Oversized { .. })));
        assert_eq!(
            decode::<FromHarness>("{\"type\": \"beat\", \"n\": 7}\r\n"),
            Ok(FromHarness::Beat(Beat { n: 7 }))
        );
    }

    #[test]
    fn a_mismatch_names_both_versions() {
        assert_eq!(
            version_mismatch(1, 2),
            "protocol version mismatch: the bridge speaks version 1, the harness speaks version 2"
        );
    }
}
