//! The skill server's vocabulary: skill names, result codes, requests, replies, events,
//! options, the observation it steps on, and the status it reports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use acres_farm::geom::Pose;
use acres_farm::SpeedLimits;

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
    /// A learned skill of the scenario (its name is the request's `name` and the motion's
    /// target; see [`crate::learned`]).
    Learned,
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
            SkillKind::Learned => "learned",
        }
    }
    /// The skill of a word (`goto`, ...).
    pub fn parse(word: &str) -> Option<SkillKind> {
        SkillKind::ALL.into_iter().find(|k| k.as_str() == word)
    }
    /// Every skill.
    pub const ALL: [SkillKind; 7] = [
        SkillKind::Goto,
        SkillKind::Scout,
        SkillKind::ReturnHome,
        SkillKind::Wait,
        SkillKind::Stop,
        SkillKind::Resume,
        SkillKind::Learned,
    ];
}

/// How a skill ended.
///
/// Declared in the order of the words, so that a map keyed by code (the score's `codes`) lists
/// them in the order a map keyed by the words would.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultCode {
    /// The shield held the vehicle for `blocked_s`.
    Blocked,
    /// Left the route or made no progress.
    Failed,
    /// A learned skill's policy failed or ran over its per-tick time budget.
    ReactiveFault,
    /// A learned skill left its scope.
    RegionExit,
    /// The request was refused; it never started.
    Rejected,
    /// A stop ended it.
    Stopped,
    /// Did what was asked.
    Succeeded,
    /// A learned skill ran for its `max_s`.
    Timeout,
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
            ResultCode::Timeout => "timeout",
            ResultCode::RegionExit => "region_exit",
            ResultCode::ReactiveFault => "reactive_fault",
        }
    }
    /// Every result code.
    pub const ALL: [ResultCode; 8] = [
        ResultCode::Succeeded,
        ResultCode::Blocked,
        ResultCode::Stopped,
        ResultCode::Rejected,
        ResultCode::Failed,
        ResultCode::Timeout,
        ResultCode::RegionExit,
        ResultCode::ReactiveFault,
    ];
    /// The code of a word (`succeeded`, ...).
    pub fn parse(word: &str) -> Option<ResultCode> {
        ResultCode::ALL.into_iter().find(|c| c.as_str() == word)
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
    /// The learned skill's name (with [`SkillKind::Learned`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl SkillRequest {
    /// A request for the learned skill `name` with no arguments.
    pub fn learned(name: &str) -> Self {
        Self { skill: Some(SkillKind::Learned), name: Some(name.into()), ..Default::default() }
    }
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The name of a skill server event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventName {
    /// A skill started.
    SkillStarted,
    /// A skill ended (with a result code and a cause).
    SkillEnded,
    /// A request was refused (code `rejected`, with its cause).
    SkillRejected,
    /// The shield began to hold the running motion.
    ShieldHold,
    /// The shield stopped holding (the path cleared, or the skill ended).
    ShieldRelease,
    /// A field's Scout loop was driven (98 %).
    FieldScouted,
    /// The vehicle node's deadman holds the running skill: the heartbeats stopped (the cause
    /// says for how long); the vehicle stands, the skill paused.
    LinkHold,
    /// The link hold ended: the heartbeats returned (the skill goes on) or the skill ended;
    /// `held_s` says how long it held.
    LinkRelease,
}

impl EventName {
    /// The word, as in `run.jsonl` and on `/acres/events`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventName::SkillStarted => "skill_started",
            EventName::SkillEnded => "skill_ended",
            EventName::SkillRejected => "skill_rejected",
            EventName::ShieldHold => "shield_hold",
            EventName::ShieldRelease => "shield_release",
            EventName::FieldScouted => "field_scouted",
            EventName::LinkHold => "link_hold",
            EventName::LinkRelease => "link_release",
        }
    }

    /// Every event name.
    pub const ALL: [EventName; 8] = [
        EventName::SkillStarted,
        EventName::SkillEnded,
        EventName::SkillRejected,
        EventName::ShieldHold,
        EventName::ShieldRelease,
        EventName::FieldScouted,
        EventName::LinkHold,
        EventName::LinkRelease,
    ];

    /// The name of a word.
    pub fn parse(word: &str) -> Option<EventName> {
        EventName::ALL.into_iter().find(|n| n.as_str() == word)
    }
}

/// The details of an event; which variant goes with which [`EventName`] is listed on each.
/// In JSON a detail is an object with exactly the variant's keys (in this order), so the run
/// folder's event rows keep their words; reading one back picks the variant by its keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EventDetail {
    /// `skill_started` of a `resume`.
    Resumed {
        /// The identifier of the skill it continues.
        resumes: u64,
        /// The motion's target.
        target: String,
        /// Metres left on the route.
        remaining_m: f64,
    },
    /// `skill_ended` of a motion.
    Ended {
        /// The motion's target.
        target: String,
        /// Fraction of the route driven, 0..1.
        progress: f64,
        /// Metres left on the route.
        remaining_m: f64,
    },
    /// `skill_started` of a motion (`goto`, `scout`, `return_home`).
    Route {
        /// The target place or field.
        target: String,
        /// Length of the route, m.
        route_m: f64,
    },
    /// `shield_hold`.
    Hold {
        /// Obstacle distance ahead of the sensor, m.
        ahead_m: f64,
        /// The stopping distance it violated, m.
        stopping_m: f64,
        /// Map x of the obstacle (from the sensor), m.
        x: f64,
        /// Map y of the obstacle, m.
        y: f64,
    },
    /// `shield_release`, `link_release`.
    Release {
        /// How long the shield (or the link hold) held, s.
        held_s: f64,
        /// Obstacle distance ahead, m (`None`: nothing ahead).
        ahead_m: Option<f64>,
        /// Why, when it is not a clear path (`the skill ended`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    /// `skill_started` of a `wait`.
    Wait {
        /// How long it waits, s.
        seconds: f64,
    },
    /// `field_scouted`.
    Scouted {
        /// The field.
        field: String,
    },
    /// No details (`skill_rejected`, `skill_ended` of a wait).
    None {},
}

/// A timestamped event of the skill server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEvent {
    /// Mission time, s.
    pub t_s: f64,
    /// What happened.
    pub name: EventName,
    /// The skill's identifier.
    pub id: Option<u64>,
    /// The skill.
    pub skill: Option<SkillKind>,
    /// The result code (`skill_ended`, `skill_rejected`).
    pub code: Option<ResultCode>,
    /// The cause.
    pub cause: Option<String>,
    /// Details (target, distances, field).
    pub detail: EventDetail,
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

/// What the skill server is doing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillState {
    /// No skill runs.
    #[default]
    Idle,
    /// A motion drives.
    Running,
    /// The shield holds the running motion.
    Holding,
    /// A wait runs.
    Waiting,
}

impl SkillState {
    /// The word (`idle`, `running`, `holding`, `waiting`).
    pub fn as_str(self) -> &'static str {
        match self {
            SkillState::Idle => "idle",
            SkillState::Running => "running",
            SkillState::Holding => "holding",
            SkillState::Waiting => "waiting",
        }
    }
}

/// The state of the skill server, as a planner may read it (the default: idle, nothing done).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The running skill.
    pub skill: Option<SkillKind>,
    /// Its identifier.
    pub id: Option<u64>,
    /// Idle, running, holding (the shield holds the vehicle) or waiting.
    pub state: SkillState,
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

impl Status {
    /// The status borrowed.
    pub fn view(&self) -> StatusRef<'_> {
        StatusRef {
            skill: self.skill,
            id: self.id,
            state: self.state,
            progress: self.progress,
            target: self.target.as_deref(),
            remaining_m: self.remaining_m,
            hold_since_s: self.hold_since_s,
            interrupted: self.interrupted.as_ref().map(|(k, id, t)| (*k, *id, t.as_str())),
            coverage: &self.coverage,
            scouted: &self.scouted,
            revision: None,
        }
    }
}

/// The state of the skill server borrowed from where it is kept: what [`Status`] holds, without
/// a copy of its text (a recording reads it after every control step).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatusRef<'a> {
    /// The running skill.
    pub skill: Option<SkillKind>,
    /// Its identifier.
    pub id: Option<u64>,
    /// Idle, running, holding or waiting.
    pub state: SkillState,
    /// Fraction of the running motion done.
    pub progress: f64,
    /// The target of the running motion.
    pub target: Option<&'a str>,
    /// Metres left on the route.
    pub remaining_m: Option<f64>,
    /// Since when the shield holds the running motion, s.
    pub hold_since_s: Option<f64>,
    /// The interrupted motion that `resume` would continue: `(skill, id, target)`.
    pub interrupted: Option<(SkillKind, u64, &'a str)>,
    /// Coverage of each field's Scout loop, 0..1.
    pub coverage: &'a BTreeMap<String, f64>,
    /// Fields scouted, in order.
    pub scouted: &'a [String],
    /// The skill server's status revision ([`crate::SkillServer::status_ref`]): two views of
    /// the same server with the same revision differ at most in the progress, the metres left
    /// and the coverage values. `None` when unknown (a view of an owned [`Status`]): then only a
    /// comparison tells.
    pub revision: Option<u64>,
}

impl StatusRef<'_> {
    /// The owned status.
    pub fn to_status(&self) -> Status {
        Status {
            skill: self.skill,
            id: self.id,
            state: self.state,
            progress: self.progress,
            target: self.target.map(str::to_string),
            remaining_m: self.remaining_m,
            hold_since_s: self.hold_since_s,
            interrupted: self.interrupted.map(|(k, id, t)| (k, id, t.to_string())),
            coverage: self.coverage.clone(),
            scouted: self.scouted.to_vec(),
        }
    }
}
