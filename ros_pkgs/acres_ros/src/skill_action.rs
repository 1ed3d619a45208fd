//! The action `/acres/skill` (`acres_interfaces/action/Skill`) as ros2-client wants it: serde
//! mirrors of the goal, result and feedback whose field-by-field CDR equals `acres_msgs`' (a
//! test checks the bytes), and conversions to and from the `acres_msgs` types.

use acres_msgs::acres_interfaces as ai;
use serde::{Deserialize, Serialize};

/// The action's type name.
pub fn type_name() -> ros2_client::ActionTypeName {
    ros2_client::ActionTypeName::new("acres_interfaces", "Skill")
}

/// `Skill_Goal`: the skill and its arguments (empty string / NaN when not given).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Goal {
    /// Skill name (`goto`, `scout`, ...).
    pub skill: String,
    /// Place.
    pub place: String,
    /// Field.
    pub field: String,
    /// Seconds (wait), NaN when not given.
    pub seconds: f64,
    /// Speed cap, m/s, NaN when not given.
    pub speed_cap_mps: f64,
}

/// `Skill_Result`: result code and cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillResult {
    /// Result code (`succeeded`, `blocked`, `stopped`, `rejected`, `failed`).
    pub code: String,
    /// Why it ended.
    pub cause: String,
    /// The skill server's id of the skill (0 when it never started).
    pub skill_id: u64,
}

/// `Skill_Feedback`: progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    /// Fraction of the motion done, 0..1.
    pub progress: f64,
    /// `running`, `holding`, `waiting`.
    pub state: String,
    /// Metres left on the route (NaN for a wait).
    pub remaining_m: f64,
}

impl ros2_client::Message for Goal {}
impl ros2_client::Message for SkillResult {}
impl ros2_client::Message for Feedback {}

impl From<ai::SkillGoal> for Goal {
    fn from(g: ai::SkillGoal) -> Self {
        Goal {
            skill: g.skill,
            place: g.place,
            field: g.field,
            seconds: g.seconds,
            speed_cap_mps: g.speed_cap_mps,
        }
    }
}
impl From<Goal> for ai::SkillGoal {
    fn from(g: Goal) -> Self {
        ai::SkillGoal {
            skill: g.skill,
            place: g.place,
            field: g.field,
            seconds: g.seconds,
            speed_cap_mps: g.speed_cap_mps,
        }
    }
}
impl From<ai::SkillResult> for SkillResult {
    fn from(r: ai::SkillResult) -> Self {
        SkillResult { code: r.code, cause: r.cause, skill_id: r.skill_id }
    }
}
impl From<SkillResult> for ai::SkillResult {
    fn from(r: SkillResult) -> Self {
        ai::SkillResult { code: r.code, cause: r.cause, skill_id: r.skill_id }
    }
}
impl From<ai::SkillFeedback> for Feedback {
    fn from(f: ai::SkillFeedback) -> Self {
        Feedback { progress: f.progress, state: f.state, remaining_m: f.remaining_m }
    }
}
impl From<Feedback> for ai::SkillFeedback {
    fn from(f: Feedback) -> Self {
        ai::SkillFeedback { progress: f.progress, state: f.state, remaining_m: f.remaining_m }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acres_msgs::example::{Example, Gen};
    use acres_msgs::Message;
    use byteorder::LittleEndian;

    /// The mirrors' CDR through RustDDS's serializer (cdr-encoding) equals acres_msgs' CDR (the
    /// one golden-tested against Cyclone DDS), for example values; and reads back.
    #[test]
    fn mirrors_have_acres_msgs_bytes() {
        let mut g = Gen::new(7);
        for _ in 0..50 {
            let goal = ai::SkillGoal::example(&mut g);
            let ours = cdr_encoding::to_vec::<_, LittleEndian>(&Goal::from(goal.clone())).unwrap();
            assert_eq!(ours, goal.encode()[4..]);
            let (back, _) = cdr_encoding::from_bytes::<Goal, LittleEndian>(&ours).unwrap();
            assert_eq!(ai::SkillGoal::from(back).encode(), goal.encode());
            let res = ai::SkillResult::example(&mut g);
            assert_eq!(
                cdr_encoding::to_vec::<_, LittleEndian>(&SkillResult::from(res.clone())).unwrap(),
                res.encode()[4..]
            );
            let fb = ai::SkillFeedback::example(&mut g);
            assert_eq!(
                cdr_encoding::to_vec::<_, LittleEndian>(&Feedback::from(fb.clone())).unwrap(),
                fb.encode()[4..]
            );
        }
    }

    /// A topic message travels as its own CDR bytes through the serde adapter, exactly.
    #[test]
    fn wire_carries_a_message_byte_for_byte() {
        use crate::wire::Wire;
        use acres_msgs::acres_interfaces::Observation;
        let mut g = Gen::new(11);
        for _ in 0..50 {
            let m = Observation::example(&mut g);
            let bytes = cdr_encoding::to_vec::<_, LittleEndian>(&Wire(m.clone())).unwrap();
            assert_eq!(bytes, m.encode()[4..]);
            let (Wire(back), _) =
                cdr_encoding::from_bytes::<Wire<Observation>, LittleEndian>(&bytes).unwrap();
            assert_eq!(back.encode(), m.encode());
        }
    }
}
