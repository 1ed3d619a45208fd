//! The `acres_interfaces` package as rosidl reads it: every `.msg` and `.action` file parses
//! with the rosidl parser (run as a real `python3` process on `rosidl_check.py`), and its fields
//! are, in order, the fields of the Rust type of the same name.
//!
//! Ignored by the plain `cargo test` (it needs the rosidl parser and the interface package beside
//! this one); the test command runs it, and it fails without them (`tests/support/require.rs`).

#[path = "../../../tests/support/require.rs"]
mod require;
use std::collections::BTreeMap;
use std::process::Command;

use acres_msgs::{for_each_message, Message};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rosidl_check.py");
const PACKAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../acres_interfaces");

macro_rules! acres_fields {
    ($($t:ty),*) => {{
        let mut out = BTreeMap::new();
        $(
            if let Some(ty) = <$t as Message>::SCHEMA.name.strip_prefix("acres_interfaces/") {
                let fields: Vec<String> =
                    <$t as Message>::FIELDS.iter().map(|f| f.trim_start_matches("r#").to_string()).collect();
                out.insert(ty.to_string(), fields);
            }
        )*
        out
    }};
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    #[test]
    #[ignore = "needs the rosidl parser (mcap-ros2-support) in the test venv: run by tools/test.sh"]
    fn rosidl_parses_every_interface_file_and_its_fields_are_the_rust_fields() {
        require::path(std::path::Path::new(PACKAGE), "the acres_interfaces package beside acres_msgs");
        require::python("mcap_ros2");
        let out = Command::new(require::python3())
            .arg(SCRIPT)
            .arg(PACKAGE)
            .arg("acres_interfaces")
            .output()
            .expect("python3 runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "rosidl refused a file: {stderr}");
        let parsed: BTreeMap<String, Vec<(String, String)>> =
            serde_json::from_slice(&out.stdout).expect("JSON");
        let theirs: BTreeMap<String, Vec<String>> =
            parsed.into_iter().map(|(k, v)| (k, v.into_iter().map(|(_, name)| name).collect())).collect();
        // Every rosidl type has a Rust type with the same fields; the Rust side has, besides, the
        // action's service and feedback-message types, which rosidl generates.
        let ours = for_each_message!(acres_fields);
        for (ty, fields) in &theirs {
            assert_eq!(ours.get(ty), Some(fields), "{ty}");
        }
        assert_eq!(theirs.len(), 13, "10 messages and the action's 3 parts: {:?}", theirs.keys());
        assert_eq!(ours.len(), theirs.len() + 5);
    }
}
