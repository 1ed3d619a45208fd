//! The observation fields a learned policy may read, each a number the vehicle has every tick,
//! measured against the skill's reference route. `skill.toml`'s `observation` names them in the
//! order of the policy's input vector. The training data (`examples/skill_data.rs`) is made by
//! this same code, so a policy sees in the field exactly what it was fitted on.

use acres_farm::geom::{wrap_angle, Pose};

use crate::follower::Follower;

/// Distances in the observation are capped here, m (an open road reads as this).
pub const FAR_M: f64 = 50.0;

/// One observation field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObsField {
    /// The vehicle's speed, m/s.
    SpeedMps,
    /// The speed cap in force (the call's `speed_cap_mps`, else the route's default), m/s.
    SpeedCapMps,
    /// Signed distance from the route, left of it positive, m.
    CrossTrackM,
    /// The route's heading at the vehicle's progress minus the vehicle's heading, rad.
    HeadingErrorRad,
    /// The route's point one look-ahead ahead (4 m + 1 m per m/s), forward in the vehicle's frame, m.
    LookaheadXM,
    /// The same point, to the left in the vehicle's frame, m.
    LookaheadYM,
    /// Metres left on the route (capped at [`FAR_M`]).
    RemainingM,
    /// The obstacle distance ahead from the latest scan (capped at [`FAR_M`]).
    AheadM,
}

impl ObsField {
    /// Every field.
    pub const ALL: [ObsField; 8] = [
        ObsField::SpeedMps,
        ObsField::SpeedCapMps,
        ObsField::CrossTrackM,
        ObsField::HeadingErrorRad,
        ObsField::LookaheadXM,
        ObsField::LookaheadYM,
        ObsField::RemainingM,
        ObsField::AheadM,
    ];

    /// The word in `skill.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            ObsField::SpeedMps => "speed_mps",
            ObsField::SpeedCapMps => "speed_cap_mps",
            ObsField::CrossTrackM => "cross_track_m",
            ObsField::HeadingErrorRad => "heading_error_rad",
            ObsField::LookaheadXM => "lookahead_x_m",
            ObsField::LookaheadYM => "lookahead_y_m",
            ObsField::RemainingM => "remaining_m",
            ObsField::AheadM => "ahead_m",
        }
    }

    /// The field of a word.
    pub fn parse(word: &str) -> Option<ObsField> {
        ObsField::ALL.into_iter().find(|o| o.as_str() == word)
    }
}

/// What one tick's observation is computed from.
#[derive(Debug, Clone, Copy)]
pub struct ObsInput<'a> {
    /// The reference route with the progress along it.
    pub route: &'a Follower,
    /// The vehicle's pose.
    pub pose: Pose,
    /// Its speed, m/s.
    pub speed_mps: f64,
    /// The speed cap in force, m/s.
    pub cap_mps: f64,
    /// The obstacle distance ahead, m (infinite: none).
    pub ahead_m: f64,
}

/// The observation vector of `fields`, in their order.
pub fn observe(fields: &[ObsField], i: &ObsInput<'_>) -> Vec<f32> {
    let path = &i.route.path;
    let s = i.route.s_m;
    let on = path.point_at(s);
    let path_yaw = path.yaw_at(s);
    let rel = i.pose.pos().sub(on);
    let ld = i.route.params.lookahead_m + i.speed_mps;
    let look = i.pose.to_local(path.point_at(s + ld));
    fields
        .iter()
        .map(|f| {
            let v = match f {
                ObsField::SpeedMps => i.speed_mps,
                ObsField::SpeedCapMps => i.cap_mps,
                ObsField::CrossTrackM => acres_farm::geom::Vec2::from_yaw(path_yaw).cross(rel),
                ObsField::HeadingErrorRad => wrap_angle(path_yaw - i.pose.yaw),
                ObsField::LookaheadXM => look.x,
                ObsField::LookaheadYM => look.y,
                ObsField::RemainingM => i.route.remaining_m().min(FAR_M),
                ObsField::AheadM => i.ahead_m.min(FAR_M),
            };
            v as f32
        })
        .collect()
}
