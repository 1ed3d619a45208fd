//! Wake-ups: why the planner is woken, and the message it gets.
//!
//! A message is a first line for people and models, then one line of JSON with the reason and
//! its details (`{"reason": "skill_ended", "skill": "goto", "code": "succeeded", ...}`), so that
//! planners that read text and planners that parse JSON get the same facts.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::planners::interface::WakeReason;

/// The facts of a wake-up: one struct per reason, written as the JSON line of the message after
/// `"reason"` (field order = key order).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum WakeDetail {
    /// The run starts.
    Start(StartWake),
    /// A skill ended: the event as `read events` shows it.
    SkillEnded(EventView),
    /// Profile vehicle: the LiDAR saw returns on a leg.
    ReturnsOnRoute(ReturnsWake),
    /// Profile simulator: an object came into the sensors' reach.
    ObjectSeen(ObjectWake),
    /// The shield held the vehicle for the recovery's `hold_s`.
    Stuck(StuckWake),
    /// The operator sent a request.
    Request(RequestWake),
    /// A `wait` timer went off.
    TimerAt(TimerAtWake),
    /// The period `wake_every_s` went by.
    Period(PeriodWake),
    /// A model call gave no reply and no skill runs.
    ModelError(ModelErrorWake),
}

/// The start: the mission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartWake {
    /// The instruction of the scenario.
    pub instruction: String,
    /// The fields in play.
    pub fields: Vec<String>,
    /// The deadline, s, if any.
    pub deadline_s: Option<f64>,
    /// The fuel limit, MJ, if any.
    pub fuel_limit_mj: Option<f64>,
}

/// A skill-server event in the short form the planner reads (`read events`, `skill_ended`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventView {
    /// Mission time, s, to 0.1 s.
    pub t_s: f64,
    /// The event's name.
    pub name: acres_vehicle::EventName,
    /// The skill's id.
    pub id: Option<u64>,
    /// The skill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill: Option<&'static str>,
    /// The result code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// The cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The event's details (the `detail` of its `event` row).
    #[serde(flatten)]
    pub detail: Map<String, Value>,
}

/// Returns on a leg of the route or of the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReturnsWake {
    /// Every blocked place on the route ahead, `[x, y]`, m.
    #[serde(rename = "on_route")]
    pub on_route_cells: Vec<[f64; 2]>,
    /// Every blocked place on the plan's legs not yet driven.
    pub on_plan: Vec<PlanCell>,
    /// The leg of the new places (`route to F55`, or a plan leg's key).
    pub leg: Option<String>,
    /// The places new since the last report, `[x, y]`, m.
    pub new_cells: Vec<[f64; 2]>,
}

/// A blocked place on a plan leg.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanCell {
    /// The leg's key.
    pub leg: String,
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
}

/// An object in the sensors' reach (simulator truth).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectWake {
    /// The object's id.
    pub id: u32,
    /// Its kind.
    pub kind: &'static str,
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// Its distance from the vehicle, m, to 0.1 m.
    pub distance_m: f64,
    /// Whether it stands within 3 m of the route ahead.
    #[serde(rename = "on_route")]
    pub near_route: bool,
}

/// The shield holds the vehicle: the recovery menu.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StuckWake {
    /// How long it has held, s (whole seconds).
    pub held_s: f64,
    /// The held skill.
    pub skill: Option<&'static str>,
    /// Its target.
    pub target: Option<String>,
    /// The obstacle ahead, m, to 0.1 m (`None`: none).
    pub ahead_m: Option<f64>,
    /// The recovery options.
    pub options: [&'static str; 4],
    /// Stuck wake-ups left in the run.
    pub stuck_wake_ups_left: u64,
}

/// A request of the operator.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestWake {
    /// The request.
    pub text: String,
}

/// A `wait` timer went off.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimerAtWake {
    /// When it was set to go off, s.
    pub timer_at_s: f64,
}

/// The periodic wake-up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodWake {
    /// The period, s.
    pub period_s: Option<f64>,
}

/// A model call gave no reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelErrorWake {
    /// Model calls without a reply so far.
    pub model_errors: u64,
}

/// A pending wake-up.
#[derive(Debug, Clone, PartialEq)]
pub struct Wake {
    /// The details (the JSON line of the message); they say the reason.
    pub detail: WakeDetail,
}

/// The JSON line of a message: the reason, then the details.
#[derive(Serialize)]
struct Line<'a> {
    reason: WakeReason,
    #[serde(flatten)]
    detail: &'a WakeDetail,
}

impl Wake {
    /// A wake-up; its reason follows from the details.
    pub fn new(detail: WakeDetail) -> Self {
        Wake { detail }
    }

    /// Why the planner is woken.
    pub fn reason(&self) -> WakeReason {
        match &self.detail {
            WakeDetail::Start(_) => WakeReason::Start,
            WakeDetail::SkillEnded(_) => WakeReason::SkillEnded,
            WakeDetail::ReturnsOnRoute(_) => WakeReason::ReturnsOnRoute,
            WakeDetail::ObjectSeen(_) => WakeReason::ObjectSeen,
            WakeDetail::Stuck(_) => WakeReason::Stuck,
            WakeDetail::Request(_) => WakeReason::Request,
            WakeDetail::TimerAt(_) | WakeDetail::Period(_) => WakeReason::Timer,
            WakeDetail::ModelError(_) => WakeReason::ModelError,
        }
    }

    /// The JSON line of the message.
    pub fn line(&self) -> String {
        serde_json::to_string(&Line { reason: self.reason(), detail: &self.detail })
            .expect("wake details are plain data")
    }

    /// The message text of wake-up `n` at mission time `t_s`.
    pub fn message(&self, n: u64, t_s: f64) -> String {
        let head = match self.reason() {
            WakeReason::Start => "The run starts.",
            WakeReason::SkillEnded => "A skill ended.",
            WakeReason::ReturnsOnRoute => {
                "The LiDAR returns points on a leg of the route or of the plan. The skill continues."
            }
            WakeReason::ObjectSeen => "An object came within the reach of the sensors. The skill continues.",
            WakeReason::Stuck => "The shield holds the vehicle. Choose a recovery option.",
            WakeReason::Request => "The operator sends a request.",
            WakeReason::Timer => "A timer went off.",
            WakeReason::ModelError => "The last model call gave no reply.",
        };
        format!("Wake-up {n} ({}) at t = {t_s:.1} s. {head}\n{}", self.reason().as_str(), self.line())
    }
}

/// The JSON line of a wake message, if the text has one.
pub fn parse_detail(text: &str) -> Option<Value> {
    text.lines().skip(1).find_map(|l| serde_json::from_str::<Value>(l.trim()).ok().filter(Value::is_object))
}
