//! Every example line of `docs/link-protocol.md` decodes as a message of its section's direction,
//! every message type of both directions has an example there, and the examples speak the
//! current version.

use std::collections::BTreeSet;

use acres_link_protocol::{decode, FromBridge, FromHarness, PROTOCOL_VERSION};

#[test]
fn every_documented_line_decodes_and_every_type_is_documented() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/link-protocol.md");
    let text = std::fs::read_to_string(path).unwrap();
    let (mut section, mut in_block) = ("", false);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("### From the bridge") {
            section = "bridge";
        } else if line.starts_with("### From the harness") {
            section = "harness";
        } else if line.starts_with("```json") {
            in_block = true;
        } else if line.starts_with("```") {
            in_block = false;
        } else if in_block {
            let ty = match section {
                "bridge" => decode::<FromBridge>(line).map(|m| check_bridge(&m, i + 1)),
                "harness" => decode::<FromHarness>(line).map(|m| check_harness(&m, i + 1)),
                _ => panic!("line {}: an example outside a direction's section", i + 1),
            };
            ty.unwrap_or_else(|e| panic!("docs/link-protocol.md:{}: {e}", i + 1));
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            seen.insert(format!("{section}:{}", v["type"].as_str().unwrap()));
        }
    }
    let want: BTreeSet<String> = [
        "bridge:hello",
        "bridge:welcome",
        "bridge:refused",
        "bridge:step",
        "bridge:sweep",
        "bridge:reply",
        "bridge:result",
        "bridge:pong",
        "bridge:error",
        "harness:attach",
        "harness:skill",
        "harness:cancel",
        "harness:beat",
        "harness:ping",
        "harness:end",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(seen, want);
}

fn check_bridge(m: &FromBridge, line: usize) {
    match m {
        FromBridge::Hello(h) => assert_eq!(h.version, PROTOCOL_VERSION, "line {line}"),
        FromBridge::Step(s) => {
            assert!(!s.observation.route_ahead.is_empty(), "line {line}: the example shows a route ahead");
            for e in &s.events {
                if e.event != "shield_hold" {
                    assert!(
                        e.hold_at.x.is_nan() && e.hold_at.y.is_nan(),
                        "line {line}: hold_at not given is null"
                    );
                }
            }
        }
        FromBridge::Sweep(s) => {
            let pts = s.unpack().unwrap_or_else(|e| panic!("line {line}: {e}"));
            assert_eq!(pts.len(), s.points as usize, "line {line}");
        }
        _ => {}
    }
}

fn check_harness(m: &FromHarness, line: usize) {
    if let FromHarness::Attach(a) = m {
        assert_eq!(a.version, PROTOCOL_VERSION, "line {line}");
    }
}
