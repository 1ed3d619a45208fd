//! The messages of the link, one serde enum per direction tagged by `"type"`; every struct
//! refuses unknown fields. The vehicle's own words travel as the ROS messages' types of
//! `acres_msgs` (the observation, the skill server's events, the simulator's truth, the skill
//! goal), so the bridge forwards what it got from ROS 2 without translating it.

use acres_msgs::acres_interfaces::{Observation, SimTruth, SkillEvent, SkillGoal};
use serde::{Deserialize, Serialize};

use crate::sweep::{Sweep, SweepEncoding};

/// What the bridge sends.
#[allow(clippy::large_enum_variant)] // steps are most of the traffic; boxing them buys nothing
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromBridge {
    /// The first line of the bridge.
    Hello(Hello),
    /// The harness is attached.
    Welcome(Welcome),
    /// The attach is refused; the bridge closes the socket.
    Refused(Refused),
    /// One observation of the vehicle, the events since the last step.
    Step(Step),
    /// One LiDAR sweep, as it came, stamped with its acquisition time.
    Sweep(Sweep),
    /// The answer to a skill request: accepted by the skill server, or rejected with a cause.
    Reply(SkillReply),
    /// The end of a skill the harness asked for: the action's result.
    Result(SkillDone),
    /// The answer to a ping.
    Pong(Pong),
    /// A line the bridge could not read (the link stays usable).
    Error(ErrorLine),
}

/// What the harness sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromHarness {
    /// The harness's answer to `hello`: its version and the token.
    Attach(Attach),
    /// Asks the skill server for a skill.
    Skill(SkillRequest),
    /// Cancels a skill the harness asked for (or every one).
    Cancel(Cancel),
    /// The harness is alive (every 0.2 s).
    Beat(Beat),
    /// Measures the link.
    Ping(Ping),
    /// The harness is done: the bridge cancels every goal it sent.
    End(End),
}

/// The bridge's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    /// The protocol version the bridge speaks.
    pub version: u32,
    /// The bridge's name and version.
    pub bridge: String,
    /// Whether `attach` must carry the token.
    pub token_required: bool,
    /// Whether steps carry a simulator's truth (a core node publishes it; a real vehicle not).
    pub truth: bool,
    /// The bridge's fresh nonce of this connection (64 hex characters): the attach's proof
    /// covers it ([`crate::auth`]).
    pub nonce: String,
    /// The sweep encodings the bridge packs, the one it prefers first.
    pub sweep_encodings: Vec<SweepEncoding>,
}

/// The harness's answer to `hello`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Attach {
    /// The protocol version the harness speaks.
    pub version: u32,
    /// The harness's name and version.
    pub harness: String,
    /// The harness's fresh nonce (64 hex characters; absent only in an attach of another
    /// version, which is refused for its version).
    #[serde(default)]
    pub nonce: String,
    /// When the bridge asks for the token: HMAC-SHA256 of the token over both nonces and the
    /// TLS channel ([`crate::auth::attach_proof`]). The token itself never travels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
    /// The encoding the harness wants its sweeps in, one of those `hello` offers (absent only
    /// in an attach of another version, which is refused for its version).
    #[serde(default)]
    pub sweep_encoding: SweepEncoding,
}

/// The harness is attached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Welcome {
    /// The vehicle's clock now, s.
    pub t_s: f64,
    /// When a token is set: the bridge's proof that it knows it too
    /// ([`crate::auth::welcome_proof`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
}

/// Why an attach is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusedCode {
    /// The versions differ.
    Version,
    /// The attach's proof is wrong or missing (a wrong or missing token).
    Token,
    /// The attach's nonce was seen before: a replayed attach.
    Replay,
    /// A plaintext client of a bridge that speaks TLS only.
    Tls,
    /// Another harness is attached (one commander at a time).
    Busy,
    /// The first line was not an `attach`.
    Protocol,
}

/// An attach refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refused {
    /// Why.
    pub code: RefusedCode,
    /// In words (a version mismatch names both versions).
    pub reason: String,
}

/// One step of the vehicle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Steps sent on this connection, from 1.
    pub seq: u64,
    /// The observation (`/acres/observation`).
    pub observation: Observation,
    /// The skill server's events since the last step (`/acres/events`).
    pub events: Vec<SkillEvent>,
    /// The simulator's truth, when a core node publishes it.
    pub truth: Option<SimTruth>,
    /// Sweeps dropped on this connection so far (replaced by a newer one before they could go).
    pub dropped_sweeps: u64,
}

/// A skill asked by the harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillRequest {
    /// The harness's request id (answered by `reply` and `result`).
    pub id: u64,
    /// The goal of `/acres/skill`.
    pub goal: SkillGoal,
}

/// The answer to a skill request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillReply {
    /// The request id.
    pub id: u64,
    /// Accepted by the skill server.
    pub accepted: bool,
    /// Why it was rejected (the trajectory checker's cause, a running skill, …); empty when
    /// accepted.
    pub cause: String,
}

/// The end of a skill: the action's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillDone {
    /// The request id.
    pub id: u64,
    /// The skill server's id of the skill.
    pub skill_id: u64,
    /// The result code: succeeded, stopped, blocked, failed, rejected, or `canceled`.
    pub code: String,
    /// The cause in words.
    pub cause: String,
}

/// Cancels a skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cancel {
    /// The request id, or `null` for every goal of this harness.
    pub id: Option<u64>,
}

/// A beat of the harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Beat {
    /// Beats sent on this connection, from 1.
    pub n: u64,
}

/// A ping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ping {
    /// The ping's number.
    pub n: u64,
}

/// The answer to a ping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pong {
    /// The ping's number.
    pub n: u64,
    /// The vehicle's clock, s.
    pub t_s: f64,
}

/// The harness is done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct End {
    /// Why (`done`, `limit_sim_time`, …).
    pub cause: String,
}

/// What was wrong with a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON, or fields of the wrong type, missing or unknown.
    Malformed,
    /// A `type` the bridge does not know.
    UnknownType,
    /// Longer than the longest line; skipped.
    Oversized,
    /// A message that is not allowed now (a skill before `attach`).
    OutOfOrder,
}

/// The answer to a line the bridge could not read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorLine {
    /// What was wrong.
    pub code: ErrorCode,
    /// In words.
    pub message: String,
}
