//! The Rust types of the ROS 2 messages acres uses, their CDR form and their `ros2msg` schema
//! text: the messages of `acres_interfaces` and the standard ones (`builtin_interfaces`,
//! `std_msgs`, `geometry_msgs`, `nav_msgs`, `sensor_msgs`, `rosgraph_msgs`, `tf2_msgs`,
//! `visualization_msgs`, `unique_identifier_msgs`, `action_msgs`).
//!
//! No ROS installation, no transport, no async: the ROS layer (`acres_ros`) publishes these
//! types, and the harness writes them into rosbag2-compatible MCAP.
//!
//! Each message implements [`Message`]: its ROS name (`std_msgs/msg/Header`), its DDS name
//! (`std_msgs::msg::dds_::Header_`), CDR with [`Message::encode`] and [`Message::decode`], and
//! [`Message::schema_text`], the `.msg` text with its dependencies as rosbag2 writes it.
//! The types also travel as JSON (serde; field names as in the `.msg` files; NaN and infinite
//! values of the fields that may hold them as `null`, `"inf"`, `"-inf"`: see [`json_float`]).
//!
//! ```
//! use acres_msgs::{rosgraph_msgs::Clock, builtin_interfaces::Time, Message};
//! let clock = Clock { clock: Time { sec: 12, nanosec: 500_000_000 } };
//! let bytes = clock.encode();
//! assert_eq!(bytes, [0, 1, 0, 0, 12, 0, 0, 0, 0x00, 0x65, 0xcd, 0x1d]);
//! assert_eq!(Clock::decode(&bytes).unwrap(), clock);
//! assert!(Clock::schema_text().ends_with("MSG: builtin_interfaces/Time\n# This message communicates ROS Time defined here:\n# https://design.ros2.org/articles/clock_and_time.html\n\n# The seconds component, valid over all int32 values.\nint32 sec\n\n# The nanoseconds component, valid in the range [0, 1e9), to be added to the seconds component.\n# e.g.\n# The time -1.7 seconds is represented as {sec: -2, nanosec: 3e8}\n# The time 1.7 seconds is represented as {sec: 1, nanosec: 7e8}\nuint32 nanosec\n"));
//! ```
//!
//! Layout: `cdr` (the encoder and decoder), `schema` (schema text), `macros` (`message!`, one
//! struct per message), `builtin`, `geometry`, `sensor`, `action_msgs`, `acres_interfaces` (the
//! messages, one module per ROS package), `example` (deterministic example values),
//! `json_float` (JSON of non-finite floats), `msg/<pkg>/<Type>.msg` (the texts). This crate is a colcon package of its own (`ament_cargo`),
//! so its manifest inherits nothing from the workspace.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

pub mod acres_interfaces;
pub mod action_msgs;
mod builtin;
pub mod cdr;
pub mod example;
mod geometry;
pub mod json_float;
mod macros;
pub mod schema;
mod sensor;
mod serde_array;

pub use builtin::{builtin_interfaces, rosgraph_msgs, std_msgs, unique_identifier_msgs};
pub use cdr::{Cdr, CdrError};
pub use geometry::{geometry_msgs, nav_msgs, tf2_msgs};
pub use schema::Schema;
pub use sensor::{sensor_msgs, visualization_msgs};

/// A ROS message: names, CDR and schema text.
pub trait Message: Cdr {
    /// The ROS type name: `pkg/msg/Type` (`pkg/srv/Type_Request`, `pkg/action/Type_Goal`).
    const ROS_NAME: &'static str;
    /// The DDS type name: `pkg::msg::dds_::Type_`.
    const DDS_NAME: &'static str;
    /// The message's own `.msg` text and its `pkg/Type` name.
    const SCHEMA: &'static Schema;
    /// The field names in `.msg` order (a field named `type` is `r#type`).
    const FIELDS: &'static [&'static str];

    /// The CDR bytes, encapsulation header first.
    fn encode(&self) -> Vec<u8> {
        let mut w = cdr::Writer::new();
        self.write(&mut w);
        w.into_bytes()
    }

    /// The CDR bytes in `buf` (emptied first; its capacity reused, so a writer of many messages
    /// allocates once).
    fn encode_into(&self, buf: &mut Vec<u8>) {
        let mut w = cdr::Writer::reusing(std::mem::take(buf));
        self.write(&mut w);
        *buf = w.into_bytes();
    }

    /// Decodes CDR bytes (encapsulation header first; up to 3 bytes of padding may follow).
    fn decode(bytes: &[u8]) -> Result<Self, CdrError> {
        let mut r = cdr::Reader::new(bytes)?;
        let value = Self::read(&mut r)?;
        r.finish()?;
        Ok(value)
    }

    /// The `ros2msg` schema text with every dependency, as rosbag2 writes it into MCAP.
    fn schema_text() -> String {
        Self::SCHEMA
            .full_text(find_schema)
            .expect("every dependency of a message of this crate is in it (tested by schema_text.rs)")
    }
}

/// Calls `$m!` with the path of every message type of this crate, comma-separated.
#[macro_export]
macro_rules! for_each_message {
    ($m:ident) => {
        $m!(
            $crate::builtin_interfaces::Time,
            $crate::builtin_interfaces::Duration,
            $crate::std_msgs::Header,
            $crate::std_msgs::ColorRGBA,
            $crate::rosgraph_msgs::Clock,
            $crate::unique_identifier_msgs::UUID,
            $crate::geometry_msgs::Vector3,
            $crate::geometry_msgs::Point,
            $crate::geometry_msgs::Quaternion,
            $crate::geometry_msgs::Pose,
            $crate::geometry_msgs::Twist,
            $crate::geometry_msgs::PoseWithCovariance,
            $crate::geometry_msgs::TwistWithCovariance,
            $crate::geometry_msgs::Transform,
            $crate::geometry_msgs::TransformStamped,
            $crate::nav_msgs::Odometry,
            $crate::tf2_msgs::TFMessage,
            $crate::sensor_msgs::PointField,
            $crate::sensor_msgs::PointCloud2,
            $crate::sensor_msgs::LaserScan,
            $crate::visualization_msgs::Marker,
            $crate::visualization_msgs::MarkerArray,
            $crate::action_msgs::GoalInfo,
            $crate::action_msgs::GoalStatus,
            $crate::action_msgs::GoalStatusArray,
            $crate::action_msgs::CancelGoalRequest,
            $crate::action_msgs::CancelGoalResponse,
            $crate::acres_interfaces::FieldCoverage,
            $crate::acres_interfaces::Observation,
            $crate::acres_interfaces::SkillEvent,
            $crate::acres_interfaces::Heartbeat,
            $crate::acres_interfaces::SimObject,
            $crate::acres_interfaces::SimTruth,
            $crate::acres_interfaces::PlannerWake,
            $crate::acres_interfaces::ModelCall,
            $crate::acres_interfaces::ToolCall,
            $crate::acres_interfaces::PlanVerdict,
            $crate::acres_interfaces::SkillGoal,
            $crate::acres_interfaces::SkillResult,
            $crate::acres_interfaces::SkillFeedback,
            $crate::acres_interfaces::SkillSendGoalRequest,
            $crate::acres_interfaces::SkillSendGoalResponse,
            $crate::acres_interfaces::SkillGetResultRequest,
            $crate::acres_interfaces::SkillGetResultResponse,
            $crate::acres_interfaces::SkillFeedbackMessage
        )
    };
}

macro_rules! schema_list {
    ($($t:ty),*) => {
        [$( <$t as Message>::SCHEMA ),*]
    };
}

/// The schema of every message of this crate.
pub static SCHEMAS: &[&Schema] = &for_each_message!(schema_list);

/// The schema of a message by its `pkg/Type` name (`std_msgs/Header`).
pub fn find_schema(name: &str) -> Option<&'static Schema> {
    SCHEMAS.iter().copied().find(|s| s.name == name)
}
