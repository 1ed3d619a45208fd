//! The skill server's vocabulary: skill names, result codes, requests, replies, events,
//! options, the observation it steps on, and the status it reports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use acres_runtime::geom::Pose;
use acres_runtime::SpeedLimits;

use crate::follower::FollowerParams;
use crate::shield::ShieldConfig;

/// A skill name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillKind {
    /// Drive to a place.
    Goto,
    /// Scout a field.
    Scout,
    /// Drive home.
    ReturnHome,
    /// Stand still for a time.
    Wait,
    /// End the running skill.
    Stop,
    /// Continue the interrupted skill.
    Resume,
}

impl SkillKind {
    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillKind::Goto => "goto",
            SkillKind::Scout => "scout",
            SkillKind::ReturnHome => "return_home",
            SkillKind::Wait => "wait",
            SkillKind::Stop => "stop",
            SkillKind::Resume => "resume",
        }
    }
    /// Every skill.
    pub const ALL: [SkillKind; 6] = [
        SkillKind::Goto,
        SkillKind::Scout,
        SkillKind::ReturnHome,
        SkillKind::Wait,
        SkillKind::Stop,
        SkillKind::Resume,
    ];
}

/// How a skill ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultCode {
    /// Did what was asked.
    Succeeded,
    /// The shield held the vehicle for `blocked_s`.
    Blocked,
    /// A stop ended it.
    Stopped,
    /// The request was refused; it never started.
    Rejected,
    /// Left the route or made no progress.
    Failed,
}

impl ResultCode {
    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultCode::Succeeded => "succeeded",
            ResultCode::Blocked => "blocked",
            ResultCode::Stopped => "stopped",
            ResultCode::Rejected => "rejected",
            ResultCode::Failed => "failed",
        }
    }
}

/// A request to the skill server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SkillRequest {
    /// The skill.
    pub skill: Option<SkillKind>,
    /// A place (`H`, a field, a lane node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
    /// A field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Seconds (wait).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Speed cap, m/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_cap_mps: Option<f64>,
}

impl SkillRequest {
    /// A request for `skill` with no arguments.
    pub fn new(skill: SkillKind) -> Self {
        Self { skill: Some(skill), ..Default::default() }
    }
    /// With a field.
    pub fn field(mut self, f: &str) -> Self {
        self.field = Some(f.into());
        self
    }
    /// With seconds.
    pub fn seconds(mut self, s: f64) -> Self {
        self.seconds = Some(s);
        self
    }
}

/// The server's answer to a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reply {
    /// The skill started (or, for `stop`, the stop was done).
    pub accepted: bool,
    /// The skill.
    pub skill: Option<SkillKind>,
    /// The new skill's identifier.
    pub id: Option<u64>,
    /// `rejected` when refused.
    pub code: Option<ResultCode>,
    /// Why it was refused, or what the stop ended.
    pub cause: Option<String>,
    /// Length of the route, m.
    pub route_m: Option<f64>,
}

impl Reply {
    /// The reply to a request that started skill `id`.
    pub fn started(kind: SkillKind, id: u64, route_m: Option<f64>, cause: Option<String>) -> Reply {
        Reply { accepted: true, skill: Some(kind), id: Some(id), code: None, cause, route_m }
    }
}

/// A timestamped event of the skill server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillEvent {
    /// Mission time, s.
    pub t_s: f64,
    /// `skill_started`, `skill_ended`, `skill_rejected`, `shield_hold`, `shield_release`, `field_scouted`.
    pub name: &'static str,
    /// The skill's identifier.
    pub id: Option<u64>,
    /// The skill.
    pub skill: Option<SkillKind>,
    /// The result code (`skill_ended`, `skill_rejected`).
    pub code: Option<ResultCode>,
    /// The cause.
    pub cause: Option<String>,
    /// Details (target, distances, field).
    pub detail: serde_json::Value,
}

/// Options of the skill server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerOptions {
    /// A motion held by the shield this long without a break ends `blocked`, s.
    pub blocked_s: f64,
    /// No progress for this long while not held ends `failed`, s.
    pub stall_s: f64,
    /// Cross-track error that ends a motion `failed`, m.
    pub max_track_error_m: f64,
    /// A scout must start this near the field's entry, m.
    pub entry_tolerance_m: f64,
    /// Speed limits (from the condition).
    pub limits: SpeedLimits,
    /// The shield.
    pub shield: ShieldConfig,
    /// The follower.
    pub follower: FollowerParams,
    /// How far ahead of the vehicle's pose the scan's origin (the LiDAR) is, m: the obstacle
    /// distance ahead is measured from there.
    pub sensor_forward_m: f64,
}

impl ServerOptions {
    /// Defaults with these speed limits.
    pub fn new(limits: SpeedLimits) -> Self {
        Self {
            blocked_s: 60.0,
            stall_s: 120.0,
            max_track_error_m: 6.0,
            entry_tolerance_m: 15.0,
            limits,
            shield: ShieldConfig::default(),
            follower: FollowerParams::default(),
            sensor_forward_m: 1.0,
        }
    }
}

/// What the vehicle knows of itself each step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// Mission time, s.
    pub t_s: f64,
    /// Pose.
    pub pose: Pose,
    /// Speed, m/s.
    pub speed_mps: f64,
}

/// The state of the skill server, as a planner may read it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// The running skill.
    pub skill: Option<SkillKind>,
    /// Its identifier.
    pub id: Option<u64>,
    /// `idle`, `running`, `holding` (the shield holds the vehicle) or `waiting`.
    pub state: &'static str,
    /// Fraction of the running motion done.
    pub progress: f64,
    /// The target of the running motion.
    pub target: Option<String>,
    /// Metres left on the route.
    pub remaining_m: Option<f64>,
    /// Since when the shield holds the running motion, s.
    pub hold_since_s: Option<f64>,
    /// The interrupted motion that `resume` would continue: `(skill, id, target)`.
    pub interrupted: Option<(SkillKind, u64, String)>,
    /// Coverage of each field's Scout loop, 0..1.
    pub coverage: BTreeMap<String, f64>,
    /// Fields scouted, in order.
    pub scouted: Vec<String>,
}
