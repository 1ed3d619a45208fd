//! Conditions of the ground (`dry`, `wet`): the speed limits the vehicle obeys under each.
//! The physical side of a condition (slip, rolling resistance) is ACRES Core's truth.

use serde::{Deserialize, Serialize};

/// A condition set of ACRES Core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// Dry ground (the default).
    #[default]
    Dry,
    /// Wet ground: lower speed limits, more slip, more rolling resistance.
    Wet,
}

/// Speed limits by ground, m/s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpeedLimits {
    /// On lanes and in the home yard.
    pub lane_mps: f64,
    /// Inside fields.
    pub field_mps: f64,
}

impl Condition {
    /// Every condition.
    pub const ALL: [Condition; 2] = [Condition::Dry, Condition::Wet];

    /// The name as written in scenarios and cost table file names.
    pub fn as_str(self) -> &'static str {
        match self {
            Condition::Dry => "dry",
            Condition::Wet => "wet",
        }
    }

    /// Parses a name; `None` for an unknown one.
    pub fn parse(s: &str) -> Option<Condition> {
        Condition::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The speed limits under this condition.
    pub fn speed_limits(self) -> SpeedLimits {
        match self {
            Condition::Dry => SpeedLimits { lane_mps: 5.0, field_mps: 2.5 },
            Condition::Wet => SpeedLimits { lane_mps: 4.0, field_mps: 2.0 },
        }
    }
}
