//! Wake-ups: why the planner is woken, and the message it gets.
//!
//! A message is a first line for people and models, then one line of JSON with the reason and
//! its details (`{"reason": "skill_ended", "skill": "goto", "code": "succeeded", ...}`), so that
//! planners that read text and planners that parse JSON get the same facts.

use serde_json::{json, Value};

use crate::runlog::rows::WakeReason;

/// A pending wake-up.
#[derive(Debug, Clone, PartialEq)]
pub struct Wake {
    /// The reason.
    pub reason: WakeReason,
    /// The details (the JSON line of the message).
    pub detail: Value,
}

impl Wake {
    /// A wake-up with details; `reason` is added to them.
    pub fn new(reason: WakeReason, mut detail: Value) -> Self {
        if let Some(o) = detail.as_object_mut() {
            let mut m = serde_json::Map::new();
            m.insert("reason".into(), json!(reason.as_str()));
            m.extend(std::mem::take(o));
            *o = m;
        }
        Wake { reason, detail }
    }

    /// The message text of wake-up `n` at mission time `t_s`.
    pub fn message(&self, n: u64, t_s: f64) -> String {
        let head = match self.reason {
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
        format!("Wake-up {n} ({}) at t = {t_s:.1} s. {head}\n{}", self.reason.as_str(), self.detail)
    }
}

/// The JSON line of a wake message, if the text has one.
pub fn parse_detail(text: &str) -> Option<Value> {
    text.lines().skip(1).find_map(|l| serde_json::from_str::<Value>(l.trim()).ok().filter(Value::is_object))
}
