//! Golden bytes from an independent implementation: every message's CDR from acres_msgs equals
//! Eclipse Cyclone DDS's serialization (PyPI `cyclonedds`, run as a real `python3` process on
//! `cyclone_cdr.py`, which defines the types again with Cyclone's IDL types) of the same values.
//!
//! The values are the crate's deterministic examples (strings with non-ASCII letters, sequences
//! of structs, byte arrays and sequences, `bool`/`uint8` before `float64`), handed to Python as
//! the crate's own JSON. No DDS participant is created: serialization needs none.
//! Ignored by the plain `cargo test` (it needs cyclonedds); the test command runs it, and it
//! fails without cyclonedds (`tests/support/require.rs`).

#[path = "../../../tests/support/require.rs"]
mod require;
use std::io::Write;
use std::process::{Command, Stdio};

use acres_msgs::example::{Example, Gen};
use acres_msgs::{for_each_message, Message};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cyclone_cdr.py");
/// Example values per message type.
const SEEDS: u64 = 12;

/// One value to serialize on both sides.
struct Case {
    dds_name: &'static str,
    json: serde_json::Value,
    ours: Vec<u8>,
}

macro_rules! cases {
    ($($t:ty),*) => {{
        let mut cases = Vec::new();
        $(
            for seed in 0..SEEDS {
                let value = <$t as Example>::example(&mut Gen::new(seed));
                cases.push(Case {
                    dds_name: <$t as Message>::DDS_NAME,
                    json: serde_json::to_value(&value).expect("a message serializes"),
                    ours: value.encode(),
                });
            }
        )*
        cases
    }};
}

macro_rules! dds_names {
    ($($t:ty),*) => { vec![$( <$t as Message>::DDS_NAME ),*] };
}

/// Cyclone's serialization of each case, as bytes.
fn cyclone(cases: &[Case]) -> Vec<Vec<u8>> {
    let input: Vec<serde_json::Value> =
        cases.iter().map(|c| serde_json::json!({"type": c.dds_name, "value": c.json})).collect();
    let mut child = Command::new(require::python3())
        .arg(SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut stdin = child.stdin.take().expect("stdin");
    let body = serde_json::to_vec(&input).expect("json");
    // Write from a thread: the child may fill its stdout pipe before reading all of stdin.
    let writer = std::thread::spawn(move || stdin.write_all(&body));
    let out = child.wait_with_output().expect("wait for python3");
    writer.join().expect("writer thread").expect("write stdin");
    assert!(out.status.success(), "cyclone_cdr.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let hex: Vec<String> = serde_json::from_slice(&out.stdout).expect("a JSON array of hex strings");
    hex.iter().map(|h| decode_hex(h)).collect()
}

fn decode_hex(h: &str) -> Vec<u8> {
    assert!(h.len().is_multiple_of(2), "odd hex length");
    (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex")).collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    #[test]
    #[ignore = "needs cyclonedds in the test venv: run by tools/test.sh"]
    fn every_message_serializes_byte_for_byte_as_cyclone_dds_does() {
        require::python("cyclonedds.idl");
        let cases = for_each_message!(cases);
        let theirs = cyclone(&cases);
        assert_eq!(theirs.len(), cases.len());
        let mut mismatches = Vec::new();
        for (case, theirs) in cases.iter().zip(&theirs) {
            if case.ours != *theirs {
                mismatches.push(format!(
                    "{}: ours {} cyclone {} for {}",
                    case.dds_name,
                    hex(&case.ours),
                    hex(theirs),
                    case.json
                ));
            }
        }
        assert!(
            mismatches.is_empty(),
            "{} of {} differ:\n{}",
            mismatches.len(),
            cases.len(),
            mismatches.join("\n")
        );
        // The examples reach the cases the layout is about.
        let has = |name: &str, pred: &dyn Fn(&serde_json::Value) -> bool| {
            cases.iter().any(|c| c.dds_name.ends_with(name) && pred(&c.json))
        };
        let non_empty = |v: &serde_json::Value, k: &str| v[k].as_array().is_some_and(|a| !a.is_empty());
        assert!(has("::TFMessage_", &|v| non_empty(v, "transforms")), "a TFMessage with transforms");
        assert!(
            has("::PointCloud2_", &|v| non_empty(v, "fields") && non_empty(v, "data")),
            "a cloud with data"
        );
        assert!(has("::Observation_", &|v| non_empty(v, "coverage") && non_empty(v, "scouted")));
        assert!(
            has("::Header_", &|v| v["frame_id"].as_str().is_some_and(|s| !s.is_ascii())),
            "a non-ASCII string"
        );
    }

    #[test]
    #[ignore = "needs cyclonedds in the test venv: run by tools/test.sh"]
    fn cyclone_script_defines_exactly_the_messages_of_the_crate() {
        require::python("cyclonedds.idl");
        let out = Command::new(require::python3()).arg(SCRIPT).arg("--list").output().expect("run python3");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut theirs: Vec<String> =
            String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
        let mut ours: Vec<String> = for_each_message!(dds_names).into_iter().map(str::to_string).collect();
        theirs.sort();
        ours.sort();
        assert_eq!(ours, theirs);
    }

    #[test]
    #[ignore = "needs cyclonedds in the test venv: run by tools/test.sh"]
    fn a_float64_after_a_bool_is_aligned_to_8_as_in_cyclone() {
        require::python("cyclonedds.idl");
        // Observation: `shield_holding` (bool) is followed by `hold_since_s` (float64).
        let obs = acres_msgs::acres_interfaces::Observation {
            shield_holding: true,
            hold_since_s: 12.25,
            header: acres_msgs::std_msgs::Header { frame_id: "map".into(), ..Default::default() },
            ..Default::default()
        };
        let ours = obs.encode();
        let theirs = cyclone(&[Case {
            dds_name: acres_msgs::acres_interfaces::Observation::DDS_NAME,
            json: serde_json::to_value(&obs).unwrap(),
            ours: ours.clone(),
        }]);
        assert_eq!(hex(&ours), hex(&theirs[0]));
        let at =
            ours.windows(8).position(|w| w == 12.25f64.to_le_bytes()).expect("hold_since_s is in the bytes");
        assert_eq!((at - 4) % 8, 0, "float64 aligned to 8 from the header's end");
    }
}
