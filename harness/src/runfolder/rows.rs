//! The rows of `run.jsonl`: one serde enum [`Row`] tagged by `"type"`.
//!
//! Every row has `t` (mission time, s) and `wall` (wall time, UNIX seconds). Each variant holds
//! one struct with `deny_unknown_fields`; a nullable field is written as `null` and must be
//! present on decode (a missing key is an error, as in the JSON Schema). [`Row::encode`] is the
//! one encode and [`Row::decode`] the one decode.
//!
//! ```
//! use acres_harness::runfolder::rows::{LinkLostRow, Row};
//! let row = Row::LinkLost(LinkLostRow { t: 12.5, wall: 1.7e9, kind: None, cause: "socket closed".into() });
//! let line = row.encode();
//! assert_eq!(line, r#"{"type":"link_lost","t":12.5,"wall":1700000000.0,"cause":"socket closed"}"#);
//! assert_eq!(Row::decode(&line).unwrap(), row);
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

pub use super::calls::{
    Block, ModelErrorKind, ModelErrorRow, ModelReplyRow, ModelRetryRow, ModelSendRow, ModelWaitRow, Repairs,
    ToolCall, ToolRow, Usage,
};
pub use super::kinds::{
    AgentFace, BlockKind, EndCode, Mode, PlanSource, PlannerKind, Profile, ReasoningLogged, Record, Stop,
    View, WakeReason, World,
};
pub use super::score::Score;
pub use crate::planners::interface::ToolDef;
pub use crate::scenario::{Limits, Recovery};

/// Decodes a nullable field that must be present: `null` is `None`, a missing key is an error.
pub(crate) fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// One line of `run.jsonl`.
// The run and end rows are large, and rare; rows are built, written and dropped, so boxing them
// would only make them clumsier to build.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Row {
    /// The first row: what was run.
    Run(RunRow),
    /// The vehicle each 0.5 s of mission time (truth of the simulator for the contact columns).
    Pose(PoseRow),
    /// A wake-up of the planner.
    Wake(WakeRow),
    /// The blocks sent in one model call.
    ModelSend(ModelSendRow),
    /// The reply of one model call.
    ModelReply(ModelReplyRow),
    /// A model call that gave no reply.
    ModelError(ModelErrorRow),
    /// A new try of a model call.
    ModelRetry(ModelRetryRow),
    /// A wait before a model call (the rate gate).
    ModelWait(ModelWaitRow),
    /// One tool call and its result.
    Tool(ToolRow),
    /// One picture in `frames/`.
    Frame(FrameRow),
    /// A plan verdict.
    PlanCheck(PlanCheckRow),
    /// An event of the skill server.
    Event(EventRow),
    /// A request of the operator from the scenario.
    Request(RequestRow),
    /// LiDAR returns on a leg of the route (profile vehicle).
    ReturnsOnRoute(ReturnsOnRouteRow),
    /// A note of the planner.
    Note(NoteRow),
    /// The link to the skill server was lost.
    LinkLost(LinkLostRow),
    /// The counts of the link.
    LinkStats(LinkStatsRow),
    /// The last row: the end, the checks and the score.
    End(EndRow),
}

/// Runs `$e` with `$r` bound to the row struct of any variant.
macro_rules! each_row {
    ($row:expr, $r:ident => $e:expr) => {
        match $row {
            Row::Run($r) => $e,
            Row::Pose($r) => $e,
            Row::Wake($r) => $e,
            Row::ModelSend($r) => $e,
            Row::ModelReply($r) => $e,
            Row::ModelError($r) => $e,
            Row::ModelRetry($r) => $e,
            Row::ModelWait($r) => $e,
            Row::Tool($r) => $e,
            Row::Frame($r) => $e,
            Row::PlanCheck($r) => $e,
            Row::Event($r) => $e,
            Row::Request($r) => $e,
            Row::ReturnsOnRoute($r) => $e,
            Row::Note($r) => $e,
            Row::LinkLost($r) => $e,
            Row::LinkStats($r) => $e,
            Row::End($r) => $e,
        }
    };
}

impl Row {
    /// Every value of `"type"`, in the order of the enum.
    pub const TYPES: [&'static str; 18] = [
        "run",
        "pose",
        "wake",
        "model_send",
        "model_reply",
        "model_error",
        "model_retry",
        "model_wait",
        "tool",
        "frame",
        "plan_check",
        "event",
        "request",
        "returns_on_route",
        "note",
        "link_lost",
        "link_stats",
        "end",
    ];

    /// The mission time of the row, s.
    pub fn t(&self) -> f64 {
        each_row!(self, r => r.t)
    }

    /// The wall time of the row, UNIX seconds.
    pub fn wall(&self) -> f64 {
        each_row!(self, r => r.wall)
    }

    /// The value of `"type"` of this row.
    pub fn type_name(&self) -> &'static str {
        let i = match self {
            Row::Run(_) => 0,
            Row::Pose(_) => 1,
            Row::Wake(_) => 2,
            Row::ModelSend(_) => 3,
            Row::ModelReply(_) => 4,
            Row::ModelError(_) => 5,
            Row::ModelRetry(_) => 6,
            Row::ModelWait(_) => 7,
            Row::Tool(_) => 8,
            Row::Frame(_) => 9,
            Row::PlanCheck(_) => 10,
            Row::Event(_) => 11,
            Row::Request(_) => 12,
            Row::ReturnsOnRoute(_) => 13,
            Row::Note(_) => 14,
            Row::LinkLost(_) => 15,
            Row::LinkStats(_) => 16,
            Row::End(_) => 17,
        };
        Self::TYPES[i]
    }

    /// Encodes the row as one line of JSON, without the newline (the one encode).
    pub fn encode(&self) -> String {
        // A row is plain data with string keys: serialization cannot fail.
        serde_json::to_string(self).expect("a row always serializes")
    }

    /// Decodes one line of JSON (the one decode): unknown types and keys are errors.
    pub fn decode(line: &str) -> Result<Row, serde_json::Error> {
        serde_json::from_str(line)
    }
}

/// The identity of the code and the randomness of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// The version of the harness (`CARGO_PKG_VERSION`).
    pub harness: String,
    /// The git commit of the tree, when known.
    #[serde(deserialize_with = "nullable")]
    pub commit: Option<String>,
    /// The seed of the run.
    pub seed: u64,
}

/// The first row: the scenario, the mode, the model and everything the planner was given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRow {
    /// Mission time, s (0).
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The contract: [`crate::runfolder::SCHEMA`].
    pub schema: String,
    /// The scenario id.
    pub scenario: String,
    /// The scenario file, as given.
    pub scenario_file: String,
    /// The scenario as it was run (its full file form, defaults included), so that replay does
    /// not depend on the file staying the same.
    pub scenario_json: Map<String, Value>,
    /// The scenario title.
    pub title: String,
    /// The instruction the planner gets at the start.
    pub instruction: String,
    /// The fields in play.
    pub fields: Vec<String>,
    /// The condition set of the core.
    pub condition: String,
    /// The deadline, s, or null.
    #[serde(deserialize_with = "nullable")]
    pub deadline_s: Option<f64>,
    /// The fuel limit, MJ, or null.
    #[serde(deserialize_with = "nullable")]
    pub fuel_limit_mj: Option<f64>,
    /// The mode.
    pub mode: Mode,
    /// The input profile.
    pub profile: Profile,
    /// The world.
    pub world: World,
    /// The model configuration name.
    pub model: String,
    /// The model file, or null (scripted, classical).
    #[serde(deserialize_with = "nullable")]
    pub model_file: Option<String>,
    /// The identity of the code and the seed.
    pub identity: Identity,
    /// The system text of the planner.
    pub system: String,
    /// The tool definitions of the planner.
    pub tools: Vec<ToolDef>,
    /// Every run limit in force (defaults, scenario values, the model file's call limits).
    pub limits: Limits,
    /// The recovery interface of the run (its mode and `hold_s`, also when off).
    pub recovery: Recovery,
    /// Mission seconds for each wall second (0: no limit).
    pub pace: f64,
    /// What the run records (`--record`); a row without it (written before the key existed)
    /// recorded both files.
    #[serde(default)]
    pub record: Record,
    /// The planner: its kind, the face an external agent used, its options and versions
    /// (absent in run folders written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planner: Option<PlannerInfo>,
    /// The serving stack of the model's server as it reports itself (server, build, model ids,
    /// template hash, window); absent when the server said nothing or there is no server, and
    /// in folders written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<crate::planners::models::serving::Serving>,
    /// What the rows carry: [`ROWS_VERSION`] (2) when they carry every fact of the score (the
    /// time charged for each call, result codes, reminders, schema errors, cut calls), so the
    /// end row's score is their fold ([`crate::runfolder::score::ScoreFold`]) and validate checks
    /// it; absent (1) in folders written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_version: Option<u32>,
}

/// The rows' version a run writes (the run row's `rows_version`): 2, the rows carry every fact
/// of the score.
pub const ROWS_VERSION: u32 = 2;

/// What planner a run had (the run row's `planner`): the score keys on planner × model × scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannerInfo {
    /// `classical`, `scripted`, `model` (a language model behind a model client), `agent` (an
    /// external agent through a face) or `replay`.
    pub kind: PlannerKind,
    /// The face of an agent: `mcp-stdio`, `mcp-http` or `line`; null for the others.
    #[serde(deserialize_with = "nullable")]
    pub face: Option<AgentFace>,
    /// The planner's options as given.
    pub options: Map<String, Value>,
    /// The versions of what made the planner (the harness, the MCP SDK).
    pub versions: Map<String, Value>,
}

impl PlannerInfo {
    /// The planner of a run of the harness's own (not an agent's): `classical` in that mode, else
    /// `scripted` or `model` by the model file's provider, with its options and the harness's
    /// version.
    pub fn of(mode: Mode, model: &str, provider: &str, think_s: f64) -> PlannerInfo {
        let kind = match (mode, provider) {
            (Mode::Classical, _) => PlannerKind::Classical,
            (_, "scripted") => PlannerKind::Scripted,
            _ => PlannerKind::Model,
        };
        let mut options = Map::new();
        if kind != PlannerKind::Classical {
            options.insert("model".into(), Value::from(model));
            options.insert("provider".into(), Value::from(provider));
        }
        if kind == PlannerKind::Scripted {
            options.insert("think_s".into(), Value::from(think_s));
        }
        let mut versions = Map::new();
        versions.insert("harness".into(), Value::from(crate::HARNESS_VERSION));
        PlannerInfo { kind, face: None, options, versions }
    }
}

/// The vehicle at one pose time (t = 0, 0.5, 1.0, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseRow {
    /// Mission time, s: a multiple of 0.5.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// Heading, rad, counter-clockwise from east.
    pub yaw: f64,
    /// Speed, m/s.
    pub speed_mps: f64,
    /// The running skill, or null.
    #[serde(deserialize_with = "nullable")]
    pub skill: Option<String>,
    /// Truth: a contact in the last control step.
    pub contact: bool,
    /// Truth: control steps with a contact since the start.
    pub contact_steps: u64,
    /// Truth: the object of the contact, or null.
    #[serde(deserialize_with = "nullable")]
    pub contact_object: Option<u32>,
}

/// A wake-up of the planner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WakeRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The wake-up number, from 1.
    pub n: u64,
    /// Why.
    pub reason: WakeReason,
    /// The text the planner gets.
    pub message: String,
    /// The map picture of the wake-up, or null.
    #[serde(deserialize_with = "nullable")]
    pub frame: Option<String>,
}

/// One picture in `frames/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The frame identifier (`f0001`).
    pub id: String,
    /// The file, relative to the run folder (`frames/f0001.png`).
    pub file: String,
    /// The view.
    pub view: View,
    /// The region of a zoom as the look tool got it, or null.
    #[serde(deserialize_with = "nullable")]
    pub region: Option<Value>,
    /// The map box shown: x min, y min, x max, y max, m.
    pub view_box: [f64; 4],
    /// Metres for each pixel.
    pub m_per_px: f64,
}

/// A plan verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanCheckRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The fields in visit order.
    pub visits: Vec<String>,
    /// Whether the plan returns home.
    pub return_home: bool,
    /// Whether the plan was accepted.
    pub accepted: bool,
    /// Who gave the verdict.
    pub source: PlanSource,
    /// The reason code of a refusal, or null.
    #[serde(deserialize_with = "nullable")]
    pub reason: Option<String>,
    /// The counterexample text of a refusal, or null.
    #[serde(deserialize_with = "nullable")]
    pub counterexample: Option<String>,
    /// The planned time, s, or null.
    #[serde(deserialize_with = "nullable")]
    pub planned_time_s: Option<f64>,
    /// The planned energy, MJ, or null.
    #[serde(deserialize_with = "nullable")]
    pub planned_energy_mj: Option<f64>,
}

/// An event of the skill server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The event name.
    pub name: String,
    /// The skill, or null.
    #[serde(deserialize_with = "nullable")]
    pub skill: Option<String>,
    /// The result code, or null.
    #[serde(deserialize_with = "nullable")]
    pub code: Option<String>,
    /// The cause, or null.
    #[serde(deserialize_with = "nullable")]
    pub cause: Option<String>,
    /// More facts of the event (may be `{}`).
    pub detail: Map<String, Value>,
}

/// A request of the operator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The request text.
    pub text: String,
}

/// Places with LiDAR returns near a leg.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReturnsOnRouteRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The centres of the 1 m cells, [x, y] in m.
    pub cells: Vec<[f64; 2]>,
    /// The leg (`goto`, `scout`, `return`, or a plan leg), or null.
    #[serde(deserialize_with = "nullable")]
    pub leg: Option<String>,
}

/// A note of the planner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The number of notes with this one.
    pub n: u64,
    /// The note.
    pub text: String,
}

/// The link was lost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkLostRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// Why, as a word (`socket_closed`, `write_failed`, `no_pong`, `silent`, `no_reply`,
    /// `vehicle_fault`). Absent in folders written before it was added (harness 0.1 before
    /// issue 32): they are still read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<crate::world::LossKind>,
    /// Why, as a sentence (the ping's number, the silence allowed, the vehicle's fault).
    pub cause: String,
}

/// The counts of the link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkStatsRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// Documents sent to the bridge.
    pub sent: u64,
    /// Documents received from the bridge.
    pub received: u64,
    /// Bytes sent to the bridge.
    pub bytes_sent: u64,
    /// Bytes received from the bridge.
    pub bytes_received: u64,
    /// LiDAR sweeps dropped.
    pub dropped_sweeps: u64,
    /// The newest ping round trip, ms (`null` before the first pong).
    pub ping_rtt_ms: Option<f64>,
    /// Wall seconds since the last step came: the link's silence, about 0 while steps flow
    /// (it does not say how late they are: `lateness_s` does).
    pub observation_age_s: f64,
    /// The newest step's lateness, s: its delay (receive time on the harness's wall clock minus
    /// the observation's stamp) above the least delay of the link; `null` before the first step
    /// or when the vehicle's clock does not run at real time; absent in rows written before it
    /// existed.
    #[serde(default)]
    pub lateness_s: Option<f64>,
    /// The largest lateness of the steps since the previous `link_stats` row, s (as
    /// `lateness_s`).
    #[serde(default)]
    pub lateness_max_s: Option<f64>,
}

/// The last row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndRow {
    /// Mission time, s.
    pub t: f64,
    /// Wall time, UNIX seconds.
    pub wall: f64,
    /// The end code (`done`, `limit_wake_ups`, `budget`, `error`, ...).
    pub end: EndCode,
    /// Whether every check of the scenario holds.
    pub success: bool,
    /// Each check of the scenario and whether it holds.
    pub checks: BTreeMap<String, bool>,
    /// The checks that failed.
    pub failed: Vec<String>,
    /// The digest of the world, hex.
    pub digest: String,
    /// The score.
    pub score: Score,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_type_and_key_and_missing_null_fail() {
        let ok = r#"{"type":"request","t":1,"wall":2,"text":"home"}"#;
        assert!(Row::decode(ok).is_ok());
        let bad_type = r#"{"type":"requests","t":1,"wall":2,"text":"home"}"#;
        assert!(Row::decode(bad_type).unwrap_err().to_string().contains("unknown variant"));
        let extra = r#"{"type":"request","t":1,"wall":2,"text":"home","x":1}"#;
        assert!(Row::decode(extra).unwrap_err().to_string().contains("unknown field `x`"));
        let no_leg = r#"{"type":"returns_on_route","t":1,"wall":2,"cells":[[1,2]]}"#;
        assert!(Row::decode(no_leg).unwrap_err().to_string().contains("missing field `leg`"));
        let null_leg = r#"{"type":"returns_on_route","t":1,"wall":2,"cells":[[1,2]],"leg":null}"#;
        assert!(Row::decode(null_leg).is_ok());
    }

    #[test]
    fn type_names_match_serde() {
        let row = Row::Note(NoteRow { t: 0.0, wall: 0.0, n: 1, text: "x".into() });
        let v: Value = serde_json::from_str(&row.encode()).unwrap();
        assert_eq!(v["type"], row.type_name());
        let row = Row::LinkStats(LinkStatsRow {
            t: 0.0,
            wall: 0.0,
            sent: 1,
            received: 1,
            bytes_sent: 10,
            bytes_received: 20,
            dropped_sweeps: 0,
            ping_rtt_ms: Some(0.2),
            observation_age_s: 0.05,
            lateness_s: Some(0.01),
            lateness_max_s: Some(0.3),
        });
        let v: Value = serde_json::from_str(&row.encode()).unwrap();
        assert_eq!(v["type"], row.type_name());
        assert_eq!(Row::decode(&row.encode()).unwrap(), row);
    }

    #[test]
    fn a_link_stats_row_written_before_the_lateness_still_reads() {
        let old = r#"{"type":"link_stats","t":5,"wall":9,"sent":1,"received":2,"bytes_sent":3,"bytes_received":4,"dropped_sweeps":0,"ping_rtt_ms":null,"observation_age_s":0.0}"#;
        match Row::decode(old).unwrap() {
            Row::LinkStats(r) => assert_eq!((r.lateness_s, r.lateness_max_s), (None, None)),
            other => panic!("{other:?}"),
        }
    }
}
