//! Every message of both directions survives encode → decode unchanged (property test over
//! seeded example values of the ROS messages inside), and the decoder survives a stream of
//! random and truncated lines without a panic.

use acres_link_protocol::*;
use acres_msgs::acres_interfaces::{Observation, SimTruth, SkillEvent, SkillGoal};
use acres_msgs::example::{Example, Gen};
use proptest::prelude::*;

fn bridge_msgs(seed: u64) -> Vec<FromBridge> {
    let g = &mut Gen::new(seed);
    let pts: Vec<[f32; 4]> = (0..(seed % 5)).map(|i| [i as f32 * 0.5, -1.25, 2.0, seed as f32]).collect();
    vec![
        FromBridge::Hello(Hello {
            version: PROTOCOL_VERSION,
            bridge: "acres_bridge 0.1".into(),
            token_required: seed.is_multiple_of(2),
            truth: true,
            nonce: "0f".repeat(32),
            sweep_encodings: SweepEncoding::ALL.to_vec(),
        }),
        FromBridge::Welcome(Welcome {
            t_s: seed as f64 * 0.05,
            proof: seed.is_multiple_of(2).then(|| "ab".repeat(32)),
        }),
        FromBridge::Refused(Refused { code: RefusedCode::Version, reason: version_mismatch(1, 2) }),
        FromBridge::Step(Step {
            seq: seed,
            observation: Observation::example(g),
            events: (0..seed % 3).map(|_| SkillEvent::example(g)).collect(),
            truth: seed.is_multiple_of(3).then(|| SimTruth::example(g)),
            dropped_sweeps: seed / 3,
        }),
        FromBridge::Sweep(Sweep::pack(1.5, &pts, SweepEncoding::ALL[(seed % 3) as usize])),
        FromBridge::Reply(SkillReply {
            id: seed,
            accepted: false,
            cause: "the route leaves the corridor at (1, 2)".into(),
        }),
        FromBridge::Result(SkillDone {
            id: seed,
            skill_id: 3,
            code: "succeeded".into(),
            cause: "arrived at F53".into(),
        }),
        FromBridge::Pong(Pong { n: seed, t_s: 12.5 }),
        FromBridge::Error(ErrorLine {
            code: ErrorCode::UnknownType,
            message: "unknown message type \"fly\"".into(),
        }),
    ]
}

fn harness_msgs(seed: u64) -> Vec<FromHarness> {
    let g = &mut Gen::new(seed);
    vec![
        FromHarness::Attach(Attach {
            version: PROTOCOL_VERSION,
            harness: "acres-harness 0.1".into(),
            nonce: "1e".repeat(32),
            proof: seed.is_multiple_of(2).then(|| "cd".repeat(32)),
            sweep_encoding: SweepEncoding::ALL[(seed % 3) as usize],
        }),
        FromHarness::Skill(SkillRequest { id: seed, goal: SkillGoal::example(g) }),
        FromHarness::Cancel(Cancel { id: seed.is_multiple_of(2).then_some(seed) }),
        FromHarness::Beat(Beat { n: seed }),
        FromHarness::Ping(Ping { n: seed }),
        FromHarness::End(End { cause: "done".into() }),
    ]
}

proptest! {
    #[test]
    fn every_message_round_trips(seed in any::<u64>()) {
        for m in bridge_msgs(seed) {
            let line = encode(&m);
            prop_assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'), "one line: {line}");
            prop_assert_eq!(decode::<FromBridge>(&line).unwrap(), m);
        }
        for m in harness_msgs(seed) {
            let line = encode(&m);
            prop_assert_eq!(decode::<FromHarness>(&line).unwrap(), m);
        }
    }

    #[test]
    fn a_packed_sweep_line_is_the_line_of_that_sweep(seed in any::<u64>(), n in 0usize..40) {
        let pts: Vec<[f32; 4]> = (0..n).map(|i| [i as f32 * 0.5, -1.25, (seed % 1000) as f32, 0.5]).collect();
        let t_s = (seed % 100_000) as f64 * 0.05;
        for e in SweepEncoding::ALL {
            let packed = PackedSweep::pack(t_s, &pts, e);
            let line = encode_sweep(&packed);
            prop_assert_eq!(&line, &encode(&FromBridge::Sweep(Sweep::pack(t_s, &pts, e))));
            let FromBridge::Sweep(back) = decode::<FromBridge>(&line).unwrap() else { panic!("{line}") };
            prop_assert_eq!(back.unpack().unwrap(), pts.clone());
        }
    }

    #[test]
    fn random_and_truncated_lines_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), cut in 0usize..2000, seed in any::<u64>()) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = decode::<FromBridge>(&text);
        let _ = decode::<FromHarness>(&text);
        for m in bridge_msgs(seed) {
            let line = encode(&m);
            let cut = cut.min(line.len());
            if line.is_char_boundary(cut) {
                let r = decode::<FromBridge>(&line[..cut]);
                if cut + 1 < line.len() {
                    prop_assert!(r.is_err(), "a truncated line is an error: {}", &line[..cut]);
                }
            }
        }
    }
}

#[test]
fn the_type_words_are_the_documented_ones() {
    let words: Vec<String> = bridge_msgs(1)
        .iter()
        .map(|m| {
            serde_json::from_str::<serde_json::Value>(&encode(m)).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(words, ["hello", "welcome", "refused", "step", "sweep", "reply", "result", "pong", "error"]);
    let words: Vec<String> = harness_msgs(1)
        .iter()
        .map(|m| {
            serde_json::from_str::<serde_json::Value>(&encode(m)).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(words, ["attach", "skill", "cancel", "beat", "ping", "end"]);
}

#[test]
fn a_full_sweep_fits_a_line_and_its_bytes_are_known() {
    let pts: Vec<[f32; 4]> = (0..14_400).map(|i| [i as f32, 0.5, -0.25, 1.0]).collect();
    let s = Sweep::pack(0.1, &pts, SweepEncoding::F32);
    assert_eq!(s.data.len(), 307_200, "base64 of 230,400 bytes");
    let line = encode(&FromBridge::Sweep(s));
    assert!(line.len() < MAX_LINE_BYTES / 10, "{}", line.len());
    match decode::<FromBridge>(&line).unwrap() {
        FromBridge::Sweep(s) => assert_eq!(s.unpack().unwrap(), pts),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_point_or_time_not_given_travels_as_null_and_comes_back_not_given() {
    let g = &mut Gen::new(5);
    let mut event = SkillEvent::example(g);
    event.hold_at = acres_msgs::geometry_msgs::Point { x: f64::NAN, y: f64::NAN, z: f64::NAN };
    let mut truth = SimTruth::example(g);
    truth.objects.push(acres_msgs::acres_interfaces::SimObject {
        id: 9,
        kind: "truck".into(),
        first_seen_s: f64::NAN,
        ..Default::default()
    });
    let step = FromBridge::Step(Step {
        seq: 3,
        observation: Observation::example(g),
        events: vec![event],
        truth: Some(truth),
        dropped_sweeps: 0,
    });
    let line = encode(&step);
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["events"][0]["hold_at"], serde_json::json!({"x": null, "y": null, "z": null}));
    let objects = v["truth"]["objects"].as_array().unwrap();
    assert_eq!(objects.last().unwrap()["first_seen_s"], serde_json::Value::Null);
    let FromBridge::Step(back) = decode::<FromBridge>(&line).unwrap() else { panic!() };
    assert!(back.events[0].hold_at.x.is_nan() && back.events[0].hold_at.z.is_nan());
    assert!(back.truth.as_ref().unwrap().objects.last().unwrap().first_seen_s.is_nan());
    assert_eq!(encode(&FromBridge::Step(back)), line, "the same line again");
}
