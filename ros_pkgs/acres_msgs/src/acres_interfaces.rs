//! `acres_interfaces`: the ROS contract of acres (see `ros_pkgs/acres_interfaces/`, whose `.msg`
//! and `.action` files document every field with its unit).
//!
//! Words (skills, result codes, states, event names, wake-up reasons) travel as the snake_case
//! words of the skill server and of `run.jsonl`; a field that does not apply is empty (strings),
//! 0 (identifiers) or NaN (numbers).
//!
//! Topics: [`Observation`] on `/acres/observation`, [`SkillEvent`] on `/acres/events`,
//! [`Heartbeat`] on `/acres/skill/heartbeat`, [`SimTruth`] on `/acres/sim/truth` (simulated runs
//! only); the planner's timeline ([`PlannerWake`], [`ModelCall`], [`ToolCall`], [`PlanVerdict`])
//! in recordings. The action `/acres/skill` uses [`SkillGoal`], [`SkillResult`], [`SkillFeedback`]
//! and the action-internal types below them.

use crate::action_msgs::GoalStatus;
use crate::builtin::builtin_interfaces::Time;
use crate::builtin::std_msgs::Header;
use crate::builtin::unique_identifier_msgs::UUID;
use crate::geometry::geometry_msgs::Point;
use crate::macros::message;

message! {
    /// How much of one field's Scout loop the vehicle has driven.
    #[derive(Default)]
    FieldCoverage = "acres_interfaces" / "msg" / "FieldCoverage" {
        /// The field (`F51`..`F60`).
        field: String,
        /// Fraction of the Scout loop covered, 0..1.
        #[serde(with = "crate::json_float")]
        coverage: f64,
    }
}

message! {
    /// What the vehicle knows of itself and its skill server (20 Hz; no simulator truth).
    #[derive(Default)]
    Observation = "acres_interfaces" / "msg" / "Observation" {
        /// Mission time on the simulation clock; frame `map`.
        header: Header,
        /// Position east, m.
        #[serde(with = "crate::json_float")]
        x_m: f64,
        /// Position north, m.
        #[serde(with = "crate::json_float")]
        y_m: f64,
        /// Heading, rad, counter-clockwise from east.
        #[serde(with = "crate::json_float")]
        yaw_rad: f64,
        /// Speed over ground, m/s.
        #[serde(with = "crate::json_float")]
        speed_mps: f64,
        /// Distance driven since the start, m.
        #[serde(with = "crate::json_float")]
        odom_m: f64,
        /// The running skill; empty when idle.
        skill: String,
        /// Its identifier; 0 when idle.
        skill_id: u64,
        /// `idle`, `running`, `holding` or `waiting`.
        state: String,
        /// Fraction of the running motion done, 0..1.
        #[serde(with = "crate::json_float")]
        progress: f64,
        /// The running motion's target; empty when none.
        target: String,
        /// Metres left on the route, m; NaN when no motion runs.
        #[serde(with = "crate::json_float")]
        remaining_m: f64,
        /// The obstacle distance ahead, m; +inf when clear.
        #[serde(with = "crate::json_float")]
        ahead_m: f64,
        /// True while the shield holds the vehicle.
        shield_holding: bool,
        /// Since when the shield holds, s (mission time); NaN when not holding.
        #[serde(with = "crate::json_float")]
        hold_since_s: f64,
        /// The interrupted motion's skill; empty when none.
        interrupted_skill: String,
        /// The interrupted motion's identifier; 0 when none.
        interrupted_id: u64,
        /// The interrupted motion's target; empty when none.
        interrupted_target: String,
        /// Coverage of each field's Scout loop, sorted by field.
        coverage: Vec<FieldCoverage>,
        /// Fields scouted, in order.
        scouted: Vec<String>,
        /// Fuel energy used, estimated from the driven distance, MJ; NaN without cost tables.
        #[serde(with = "crate::json_float")]
        energy_estimate_mj: f64,
        /// The route ahead of the running motion (or of the interrupted one), map frame, m;
        /// empty when none.
        route_ahead: Vec<Point>,
    }
}

message! {
    /// One event of the skill server.
    #[derive(Default)]
    SkillEvent = "acres_interfaces" / "msg" / "SkillEvent" {
        /// Mission time of the event; frame `map`.
        header: Header,
        /// `skill_started`, `skill_ended`, `skill_rejected`, `shield_hold`, `shield_release`,
        /// `field_scouted`.
        event: String,
        /// The skill's identifier; 0 for `skill_rejected`.
        skill_id: u64,
        /// The skill; empty when unknown.
        skill: String,
        /// The result code (`skill_ended`, `skill_rejected`); empty otherwise.
        code: String,
        /// The cause (`skill_ended`, `skill_rejected`); empty otherwise.
        cause: String,
        /// The motion's target (`skill_started`, `skill_ended`).
        target: String,
        /// The route's length at the start, m.
        #[serde(with = "crate::json_float")]
        route_m: f64,
        /// Metres left on the route, m.
        #[serde(with = "crate::json_float")]
        remaining_m: f64,
        /// Fraction of the motion done when it ended, 0..1.
        #[serde(with = "crate::json_float")]
        progress: f64,
        /// The wait's length, s.
        #[serde(with = "crate::json_float")]
        seconds: f64,
        /// The skill a resume continues; 0 otherwise.
        resumes_id: u64,
        /// The obstacle distance ahead (`shield_hold`, `shield_release`), m.
        #[serde(with = "crate::json_float")]
        ahead_m: f64,
        /// The stopping distance at the hold's speed (`shield_hold`), m.
        #[serde(with = "crate::json_float")]
        stopping_m: f64,
        /// Where the obstacle is in the map frame (`shield_hold`), m.
        hold_at: Point,
        /// How long the shield held (`shield_release`), s.
        #[serde(with = "crate::json_float")]
        held_s: f64,
        /// Why a hold ended other than by a clear way (`shield_release`).
        why: String,
        /// The field scouted (`field_scouted`).
        field: String,
    }
}

message! {
    /// One beat of the planner side (every 0.2 s).
    #[derive(Default)]
    Heartbeat = "acres_interfaces" / "msg" / "Heartbeat" {
        /// Wall time of the beat at the sender.
        stamp: Time,
        /// The beat's number, from 1.
        seq: u64,
        /// Who beats.
        sender: String,
    }
}

message! {
    /// One object of the simulated world (truth).
    #[derive(Default)]
    SimObject = "acres_interfaces" / "msg" / "SimObject" {
        /// The object's identifier in the scenario.
        id: u32,
        /// `truck`, `person`, `tractor` or `car`.
        kind: String,
        /// Position east, m.
        #[serde(with = "crate::json_float")]
        x_m: f64,
        /// Position north, m.
        #[serde(with = "crate::json_float")]
        y_m: f64,
        /// Heading, rad, counter-clockwise from east.
        #[serde(with = "crate::json_float")]
        yaw_rad: f64,
        /// When the LiDAR first returned points from it, s; NaN when never.
        #[serde(with = "crate::json_float")]
        first_seen_s: f64,
    }
}

message! {
    /// The simulator's truth (simulated runs only; never a planner input).
    #[derive(Default)]
    SimTruth = "acres_interfaces" / "msg" / "SimTruth" {
        /// Mission time; frame `map`.
        header: Header,
        /// The objects, sorted by id.
        objects: Vec<SimObject>,
        /// A contact in the last control step.
        contact: bool,
        /// Control steps with a contact since the start.
        contact_steps: u64,
        /// The object of the last contact; -1 when none.
        contact_object: i64,
        /// Fuel energy used since the start, MJ.
        #[serde(with = "crate::json_float")]
        energy_mj: f64,
    }
}

message! {
    /// A wake-up of the planner.
    #[derive(Default)]
    PlannerWake = "acres_interfaces" / "msg" / "PlannerWake" {
        /// Mission time of the wake-up.
        stamp: Time,
        /// The wake-up number, from 1.
        n: u64,
        /// Why (`start`, `skill_ended`, `stuck`, ...).
        reason: String,
        /// The text the planner gets.
        message: String,
        /// The wake-up's picture (`frames/f0001.png`); empty when none.
        frame: String,
    }
}

message! {
    /// One model call, with its request time and latency.
    #[derive(Default)]
    ModelCall = "acres_interfaces" / "msg" / "ModelCall" {
        /// Mission time of the request.
        request_stamp: Time,
        /// The time the call took, charged on the mission clock, s.
        #[serde(with = "crate::json_float")]
        latency_s: f64,
        /// The call number, from 1.
        call: u64,
        /// The wake-up of the call.
        wake: u64,
        /// Blocks sent (only the new ones).
        blocks_sent: u32,
        /// Why the reply stopped; empty on an error.
        stop: String,
        /// The answer text.
        text: String,
        /// The reasoning text; empty when none.
        reasoning: String,
        /// The tool calls asked for, by id, in order.
        tool_call_ids: Vec<String>,
        /// Input tokens, not cached.
        input_tokens: u64,
        /// Output tokens, reasoning included.
        output_tokens: u64,
        /// Input tokens read from the cache.
        cache_read_tokens: u64,
        /// Input tokens written to the cache.
        cache_write_tokens: u64,
        /// What went wrong; empty on success.
        error: String,
    }
}

message! {
    /// One tool call and its result.
    #[derive(Default)]
    ToolCall = "acres_interfaces" / "msg" / "ToolCall" {
        /// Mission time of the call.
        stamp: Time,
        /// The wake-up of the call.
        wake: u64,
        /// The call id of the model reply.
        call_id: String,
        /// The tool name.
        name: String,
        /// The arguments, JSON text.
        arguments_json: String,
        /// The result object, JSON text.
        result_json: String,
        /// True for an error result.
        error: bool,
    }
}

message! {
    /// A plan verdict.
    #[derive(Default)]
    PlanVerdict = "acres_interfaces" / "msg" / "PlanVerdict" {
        /// Mission time of the verdict.
        stamp: Time,
        /// The fields in visit order.
        visits: Vec<String>,
        /// True when the plan returns home.
        return_home: bool,
        /// True when accepted.
        accepted: bool,
        /// `plan_checker` or `harness`.
        source: String,
        /// The reason code of a refusal; empty when accepted.
        reason: String,
        /// The counterexample of a refusal; empty when accepted.
        counterexample: String,
        /// The planned time, s; NaN when not known.
        #[serde(with = "crate::json_float")]
        planned_time_s: f64,
        /// The planned fuel energy, MJ; NaN when not known.
        #[serde(with = "crate::json_float")]
        planned_energy_mj: f64,
    }
}

message! {
    /// The goal of `/acres/skill`: a skill and its arguments.
    #[derive(Default)]
    SkillGoal = "acres_interfaces" / "action" / "Skill_Goal" {
        /// `goto`, `scout`, `return_home`, `wait`, `stop` or `resume`.
        skill: String,
        /// The place (goto); empty when not given.
        place: String,
        /// The field (scout); empty when not given.
        field: String,
        /// How long to wait, s; NaN when not given.
        #[serde(with = "crate::json_float")]
        seconds: f64,
        /// The speed cap, m/s; NaN for none.
        #[serde(with = "crate::json_float")]
        speed_cap_mps: f64,
    }
}

message! {
    /// The result of `/acres/skill`.
    #[derive(Default)]
    SkillResult = "acres_interfaces" / "action" / "Skill_Result" {
        /// `succeeded`, `blocked`, `stopped`, `rejected` or `failed`.
        code: String,
        /// Why.
        cause: String,
        /// The skill's identifier; 0 when it never started.
        skill_id: u64,
    }
}

message! {
    /// The feedback of `/acres/skill`.
    #[derive(Default)]
    SkillFeedback = "acres_interfaces" / "action" / "Skill_Feedback" {
        /// Fraction of the motion done, 0..1.
        #[serde(with = "crate::json_float")]
        progress: f64,
        /// `idle`, `running`, `holding` or `waiting`.
        state: String,
        /// Metres left on the route, m; NaN without a route.
        #[serde(with = "crate::json_float")]
        remaining_m: f64,
    }
}

message! {
    /// The request of the action's `send_goal` service.
    #[derive(Default)]
    SkillSendGoalRequest = "acres_interfaces" / "action" / "Skill_SendGoal_Request" {
        /// The new goal's identifier (chosen by the client).
        goal_id: UUID,
        /// The goal.
        goal: SkillGoal,
    }
}

message! {
    /// The response of the action's `send_goal` service.
    #[derive(Default, Copy)]
    SkillSendGoalResponse = "acres_interfaces" / "action" / "Skill_SendGoal_Response" {
        /// True when the server accepted the goal.
        accepted: bool,
        /// When it was accepted.
        stamp: Time,
    }
}

message! {
    /// The request of the action's `get_result` service.
    #[derive(Default, Copy)]
    SkillGetResultRequest = "acres_interfaces" / "action" / "Skill_GetResult_Request" {
        /// The goal.
        goal_id: UUID,
    }
}

message! {
    /// The response of the action's `get_result` service.
    #[derive(Default)]
    SkillGetResultResponse = "acres_interfaces" / "action" / "Skill_GetResult_Response" {
        /// The goal's final state (a `GoalStatus::STATUS_*` value).
        status: i8,
        /// The result.
        result: SkillResult,
    }
}

message! {
    /// One feedback message on the action's `feedback` topic.
    #[derive(Default)]
    SkillFeedbackMessage = "acres_interfaces" / "action" / "Skill_FeedbackMessage" {
        /// The goal.
        goal_id: UUID,
        /// The feedback.
        feedback: SkillFeedback,
    }
}

impl SkillGetResultResponse {
    /// True when the goal ended (succeeded, cancelled or aborted).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self.status,
            GoalStatus::STATUS_SUCCEEDED | GoalStatus::STATUS_CANCELED | GoalStatus::STATUS_ABORTED
        )
    }
}
