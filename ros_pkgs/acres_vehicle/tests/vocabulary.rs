//! The skill server's typed vocabulary keeps the words of `run.jsonl`: names, states, codes and
//! rules serialize to the words their `as_str` gives, and every event detail writes exactly its
//! keys and reads back as the same variant.

use acres_vehicle::shield::{Shield, ShieldRule};
use acres_vehicle::{EventDetail, EventName, ResultCode, SkillKind, SkillState};
use serde_json::json;

#[test]
fn words_are_serdes_words() {
    for n in EventName::ALL {
        assert_eq!(json!(n), json!(n.as_str()));
        assert_eq!(EventName::parse(n.as_str()), Some(n));
    }
    for c in ResultCode::ALL {
        assert_eq!(json!(c), json!(c.as_str()));
        assert_eq!(ResultCode::parse(c.as_str()), Some(c));
    }
    for k in SkillKind::ALL {
        assert_eq!(json!(k), json!(k.as_str()));
        assert_eq!(SkillKind::parse(k.as_str()), Some(k));
    }
    for s in [SkillState::Idle, SkillState::Running, SkillState::Holding, SkillState::Waiting] {
        assert_eq!(json!(s), json!(s.as_str()));
    }
    let rules = Shield::default().rules();
    let words: Vec<_> = rules.iter().map(|r| json!(r.name)).collect();
    assert_eq!(words, [json!("stop_distance"), json!("release"), json!("never_rewrites")]);
    for r in rules {
        let back: ShieldRule = serde_json::from_value(json!(r)).unwrap();
        assert_eq!(back, r);
    }
}

#[test]
fn each_detail_writes_its_keys_and_reads_back_as_itself() {
    let cases = [
        (
            EventDetail::Resumed { resumes: 3, target: "F51".into(), remaining_m: 12.5 },
            json!({"resumes": 3, "target": "F51", "remaining_m": 12.5}),
        ),
        (
            EventDetail::Ended { target: "H".into(), progress: 1.0, remaining_m: 0.0 },
            json!({"target": "H", "progress": 1.0, "remaining_m": 0.0}),
        ),
        (
            EventDetail::Route { target: "F52".into(), route_m: 300.0 },
            json!({"target": "F52", "route_m": 300.0}),
        ),
        (
            EventDetail::Hold { ahead_m: 5.0, stopping_m: 9.0, x: 1.0, y: 2.0 },
            json!({"ahead_m": 5.0, "stopping_m": 9.0, "x": 1.0, "y": 2.0}),
        ),
        (
            EventDetail::Release { held_s: 4.0, ahead_m: None, why: Some("the skill ended".into()) },
            json!({"held_s": 4.0, "ahead_m": null, "why": "the skill ended"}),
        ),
        (
            EventDetail::Release { held_s: 4.0, ahead_m: Some(20.0), why: None },
            json!({"held_s": 4.0, "ahead_m": 20.0}),
        ),
        (EventDetail::Wait { seconds: 30.0 }, json!({"seconds": 30.0})),
        (EventDetail::Scouted { field: "F53".into() }, json!({"field": "F53"})),
        (EventDetail::None {}, json!({})),
    ];
    for (detail, words) in cases {
        let v = serde_json::to_value(&detail).unwrap();
        assert_eq!(v, words);
        // Same keys in the same order as the rows always had.
        assert_eq!(serde_json::to_string(&v).unwrap(), serde_json::to_string(&words).unwrap());
        let back: EventDetail = serde_json::from_value(words).unwrap();
        assert_eq!(back, detail);
    }
}
