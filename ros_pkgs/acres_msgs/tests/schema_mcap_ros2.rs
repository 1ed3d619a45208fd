//! The schema texts and the CDR together, read by an independent reader: the Python MCAP ROS 2
//! decoder (PyPI `mcap-ros2-support`, run as a real `python3` process on `mcap_ros2_decode.py`)
//! parses each message's full `ros2msg` text, as a recording would carry it, decodes the crate's
//! CDR with it, and must give back the very value that was encoded (compared as JSON).
//!
//! Service and action-internal types (`CancelGoal_Request`, `Skill_Goal`, ...) are left out: their
//! names hold `_`, which the rosidl message parser refuses (rosbag2 records such types with
//! `ros2idl` schemas instead); the topics acres records are all plain messages.
//!
//! Ignored by the plain `cargo test` (it needs mcap-ros2-support); the test command runs it, and
//! it fails without it (`tests/support/require.rs`).

#[path = "../../../tests/support/require.rs"]
mod require;
use std::io::Write;
use std::process::{Command, Stdio};

use acres_msgs::example::{Example, Gen};
use acres_msgs::{for_each_message, Message};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcap_ros2_decode.py");
/// Example values per message type.
const SEEDS: u64 = 6;

/// One value: what the reader gets, and what it must give back.
struct Case {
    ros_name: &'static str,
    input: serde_json::Value,
    expected: serde_json::Value,
}

/// True for the types whose name a rosidl message parser refuses (`Type_Request`, ...).
fn internal(ros_name: &str) -> bool {
    ros_name.rsplit('/').next().is_some_and(|ty| ty.contains('_'))
}

macro_rules! cases {
    ($($t:ty),*) => {{
        let mut cases = Vec::new();
        let mut left_out = 0;
        $(
            if internal(<$t as Message>::ROS_NAME) {
                let kind = <$t as Message>::ROS_NAME.split('/').nth(1);
                assert!(matches!(kind, Some("srv" | "action")), "{} is left out", <$t as Message>::ROS_NAME);
                left_out += 1;
            } else {
                let text = <$t as Message>::schema_text();
                for seed in 0..SEEDS {
                    let value = <$t as Example>::example(&mut Gen::new(seed));
                    let cdr: String = value.encode().iter().map(|b| format!("{b:02x}")).collect();
                    cases.push(Case {
                        ros_name: <$t as Message>::ROS_NAME,
                        input: serde_json::json!({
                            "schema_name": <$t as Message>::SCHEMA.name,
                            "schema_text": text,
                            "cdr": cdr,
                        }),
                        expected: serde_json::to_value(&value).expect("a message serializes"),
                    });
                }
            }
        )*
        (cases, left_out)
    }};
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    #[test]
    #[ignore = "needs mcap-ros2-support in the test venv: run by tools/test.sh"]
    fn the_mcap_ros2_reader_decodes_every_message_with_its_schema_text() {
        require::python("mcap_ros2._dynamic");
        let (cases, left_out) = for_each_message!(cases);
        // CancelGoal request and response, and the Skill action's eight types.
        assert_eq!(left_out, 10);
        let input: Vec<&serde_json::Value> = cases.iter().map(|c| &c.input).collect();
        let body = serde_json::to_vec(&input).expect("json");
        let mut child = Command::new(require::python3())
            .arg(SCRIPT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start python3");
        let mut stdin = child.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || stdin.write_all(&body));
        let out = child.wait_with_output().expect("wait for python3");
        writer.join().expect("writer thread").expect("write stdin");
        assert!(out.status.success(), "mcap_ros2_decode.py failed: {}", String::from_utf8_lossy(&out.stderr));
        let decoded: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("a JSON array");
        assert_eq!(decoded.len(), cases.len());
        let wrong: Vec<String> = cases
            .iter()
            .zip(&decoded)
            .filter(|(c, d)| c.expected != **d)
            .map(|(c, d)| format!("{}:\n  encoded {}\n  decoded {d}", c.ros_name, c.expected))
            .collect();
        assert!(wrong.is_empty(), "{} of {} differ:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
    }
}
