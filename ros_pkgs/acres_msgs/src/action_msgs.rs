//! `action_msgs`: the types every ROS 2 action uses for goal status and cancelling.

use crate::builtin::builtin_interfaces::Time;
use crate::builtin::unique_identifier_msgs::UUID;
use crate::macros::message;

message! {
    /// A goal's identifier and when it was accepted.
    #[derive(Default, Copy)]
    GoalInfo = "action_msgs" / "msg" / "GoalInfo" {
        /// The goal's identifier.
        goal_id: UUID,
        /// When the server accepted it.
        stamp: Time,
    }
}

message! {
    /// A goal's state.
    #[derive(Default, Copy)]
    GoalStatus = "action_msgs" / "msg" / "GoalStatus" {
        /// The goal.
        goal_info: GoalInfo,
        /// Its state (`GoalStatus::STATUS_SUCCEEDED`, ...).
        status: i8,
    }
}

impl GoalStatus {
    /// Not set.
    pub const STATUS_UNKNOWN: i8 = 0;
    /// Accepted, waiting to run.
    pub const STATUS_ACCEPTED: i8 = 1;
    /// Running.
    pub const STATUS_EXECUTING: i8 = 2;
    /// A cancel was accepted; ending.
    pub const STATUS_CANCELING: i8 = 3;
    /// Done.
    pub const STATUS_SUCCEEDED: i8 = 4;
    /// Cancelled on request.
    pub const STATUS_CANCELED: i8 = 5;
    /// Ended by the server without a request.
    pub const STATUS_ABORTED: i8 = 6;
}

message! {
    /// The states of an action server's goals (topic `<action>/_action/status`).
    #[derive(Default)]
    GoalStatusArray = "action_msgs" / "msg" / "GoalStatusArray" {
        /// The goals.
        status_list: Vec<GoalStatus>,
    }
}

message! {
    /// A cancel request (service `<action>/_action/cancel_goal`): zero id and zero stamp cancel
    /// every goal; see the `.msg` text for the policy.
    #[derive(Default, Copy)]
    CancelGoalRequest = "action_msgs" / "srv" / "CancelGoal_Request" {
        /// The goals to cancel.
        goal_info: GoalInfo,
    }
}

message! {
    /// The answer to a cancel request.
    #[derive(Default)]
    CancelGoalResponse = "action_msgs" / "srv" / "CancelGoal_Response" {
        /// `CancelGoalResponse::ERROR_NONE`, ...
        return_code: i8,
        /// The goals that are now cancelling.
        goals_canceling: Vec<GoalInfo>,
    }
}

impl CancelGoalResponse {
    /// Accepted: one or more goals are cancelling.
    pub const ERROR_NONE: i8 = 0;
    /// Refused.
    pub const ERROR_REJECTED: i8 = 1;
    /// No such goal.
    pub const ERROR_UNKNOWN_GOAL_ID: i8 = 2;
    /// The goal already ended.
    pub const ERROR_GOAL_TERMINATED: i8 = 3;
}
