//! Prints, as one JSON object, what acres_msgs says of every message type: its ROS name, its
//! fields in order, its constants, and example values with their CDR bytes. The rosidl check
//! (`tests/ros/check_rosidl_types.py`, a step of `tools/ros_test.sh`) compares all of it with the
//! types rosidl generated (rclpy's serialization of the same values, the generated field lists
//! and constants).
//!
//! `cargo run -p acres_msgs --example rosidl_types > types.json`

use acres_msgs::example::{Example, Gen};
use acres_msgs::{for_each_message, Message};
use serde_json::{json, Value};

/// Example values per type.
const SEEDS: u64 = 6;

macro_rules! types {
    ($($t:ty),*) => {{
        let mut out = Vec::new();
        $(
            let examples: Vec<Value> = (0..SEEDS)
                .map(|seed| {
                    let v = <$t as Example>::example(&mut Gen::new(seed));
                    let cdr: String = v.encode().iter().map(|b| format!("{b:02x}")).collect();
                    json!({"value": serde_json::to_value(&v).expect("a message serializes"), "cdr": cdr})
                })
                .collect();
            out.push(json!({
                "ros_name": <$t as Message>::ROS_NAME,
                "fields": <$t as Message>::FIELDS.iter().map(|f| f.trim_start_matches("r#")).collect::<Vec<_>>(),
                "examples": examples,
            }));
        )*
        out
    }};
}

/// The constants of the types that have any, as the Rust side names them.
fn constants() -> Value {
    use acres_msgs::action_msgs::{CancelGoalResponse as C, GoalStatus as G};
    use acres_msgs::sensor_msgs::PointField as P;
    use acres_msgs::visualization_msgs::Marker as M;
    json!({
        "action_msgs/msg/GoalStatus": {
            "STATUS_UNKNOWN": G::STATUS_UNKNOWN, "STATUS_ACCEPTED": G::STATUS_ACCEPTED,
            "STATUS_EXECUTING": G::STATUS_EXECUTING, "STATUS_CANCELING": G::STATUS_CANCELING,
            "STATUS_SUCCEEDED": G::STATUS_SUCCEEDED, "STATUS_CANCELED": G::STATUS_CANCELED,
            "STATUS_ABORTED": G::STATUS_ABORTED,
        },
        "action_msgs/srv/CancelGoal_Response": {
            "ERROR_NONE": C::ERROR_NONE, "ERROR_REJECTED": C::ERROR_REJECTED,
            "ERROR_UNKNOWN_GOAL_ID": C::ERROR_UNKNOWN_GOAL_ID, "ERROR_GOAL_TERMINATED": C::ERROR_GOAL_TERMINATED,
        },
        "sensor_msgs/msg/PointField": {
            "INT8": P::INT8, "UINT8": P::UINT8, "INT16": P::INT16, "UINT16": P::UINT16,
            "INT32": P::INT32, "UINT32": P::UINT32, "FLOAT32": P::FLOAT32, "FLOAT64": P::FLOAT64,
        },
        "visualization_msgs/msg/Marker": {
        "ARROW": M::ARROW, "CUBE": M::CUBE, "SPHERE": M::SPHERE, "CYLINDER": M::CYLINDER,
        "LINE_STRIP": M::LINE_STRIP, "LINE_LIST": M::LINE_LIST, "CUBE_LIST": M::CUBE_LIST,
        "SPHERE_LIST": M::SPHERE_LIST, "POINTS": M::POINTS, "TEXT_VIEW_FACING": M::TEXT_VIEW_FACING,
        "MESH_RESOURCE": M::MESH_RESOURCE, "TRIANGLE_LIST": M::TRIANGLE_LIST,
        "ADD": M::ADD, "MODIFY": M::MODIFY, "DELETE": M::DELETE, "DELETEALL": M::DELETEALL,
        },
    })
}

fn main() {
    let out = json!({"types": for_each_message!(types), "constants": constants()});
    println!("{}", serde_json::to_string_pretty(&out).expect("JSON"));
}
