//! The `acres_interfaces` package as rosidl reads it: every `.msg` and `.action` file parses
//! with the rosidl parser (run as a real `python3` process on `rosidl_check.py`), and its fields
//! are, in order, the fields of the Rust type of the same name.
//!
//! Skips, with a message on stderr, when `python3` cannot import mcap_ros2 (fails instead when
//! `ACRES_REQUIRE_PYTHON` is set), or when the interface package is not next to this one (colcon
//! builds this package from a copy of its own folder).

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

#[test]
fn rosidl_parses_every_interface_file_and_its_fields_are_the_rust_fields() {
    if !std::path::Path::new(PACKAGE).exists() {
        eprintln!("skipping: {PACKAGE} is not next to this package");
        return;
    }
    let out = match Command::new("python3").arg(SCRIPT).arg(PACKAGE).arg("acres_interfaces").output() {
        Ok(out) => out,
        Err(e) => {
            assert!(std::env::var_os("ACRES_REQUIRE_PYTHON").is_none(), "python3 not runnable: {e}");
            eprintln!("skipping: python3 not runnable: {e}");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("No module named 'mcap_ros2'") {
        assert!(std::env::var_os("ACRES_REQUIRE_PYTHON").is_none(), "python3 cannot import mcap_ros2");
        eprintln!("skipping: python3 cannot import mcap_ros2");
        return;
    }
    assert!(out.status.success(), "rosidl refused a file: {stderr}");
    let parsed: BTreeMap<String, Vec<(String, String)>> = serde_json::from_slice(&out.stdout).expect("JSON");
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
