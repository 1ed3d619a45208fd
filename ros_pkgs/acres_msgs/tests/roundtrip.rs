//! Round trips and bad input: every message decodes from its own CDR to an equal value and
//! survives JSON; truncated or corrupted bytes give an error, never a panic.

use acres_msgs::example::{Example, Gen};
use acres_msgs::sensor_msgs::PointCloud2;
use acres_msgs::{for_each_message, CdrError, Message};
use proptest::prelude::*;

fn round_trip<
    T: Message + Example + Clone + serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
>(
    seed: u64,
) -> Result<(), TestCaseError> {
    let value = T::example(&mut Gen::new(seed));
    let bytes = value.encode();
    prop_assert_eq!(&bytes[..4], &[0u8, 1, 0, 0][..], "{}: encapsulation header", T::ROS_NAME);
    // A reused buffer, holding another message's bytes, gives the same bytes.
    let mut reused = vec![0xA5u8; (seed % 97) as usize];
    value.encode_into(&mut reused);
    prop_assert_eq!(&reused, &bytes, "{}: encode_into a used buffer", T::ROS_NAME);
    prop_assert_eq!(T::decode(&bytes), Ok(value.clone()), "{}", T::ROS_NAME);
    // Up to 3 bytes of padding may follow a payload; a fourth is an error.
    let mut padded = bytes.clone();
    padded.extend_from_slice(&[0, 0, 0]);
    prop_assert_eq!(T::decode(&padded), Ok(value.clone()), "{}: padded", T::ROS_NAME);
    padded.push(0);
    prop_assert_eq!(T::decode(&padded), Err(CdrError::TrailingBytes { extra: 4 }), "{}", T::ROS_NAME);
    // Every strict prefix is an error (no payload ends in padding), and none panics.
    for len in 0..bytes.len() {
        prop_assert!(T::decode(&bytes[..len]).is_err(), "{}: a prefix of {len} bytes decoded", T::ROS_NAME);
    }
    let json = serde_json::to_string(&value).expect("serializes");
    prop_assert_eq!(serde_json::from_str::<T>(&json).ok(), Some(value), "{}: JSON", T::ROS_NAME);
    Ok(())
}

fn corrupt<T: Message + Example>(seed: u64, at: usize, byte: u8) {
    let mut bytes = T::example(&mut Gen::new(seed)).encode();
    let i = at % bytes.len();
    bytes[i] = byte;
    // Any answer but a panic.
    let _ = T::decode(&bytes);
}

macro_rules! round_trip_all {
    ($($t:ty),*) => {{
        let checks: Vec<fn(u64) -> Result<(), TestCaseError>> = vec![$( round_trip::<$t> ),*];
        checks
    }};
}

macro_rules! corrupt_all {
    ($($t:ty),*) => {{
        let checks: Vec<fn(u64, usize, u8)> = vec![$( corrupt::<$t> ),*];
        checks
    }};
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_message_round_trips_through_cdr_and_json(seed in any::<u64>()) {
        for check in for_each_message!(round_trip_all) {
            check(seed)?;
        }
    }

    #[test]
    fn corrupted_bytes_never_panic(seed in any::<u64>(), at in any::<usize>(), byte in any::<u8>()) {
        for check in for_each_message!(corrupt_all) {
            check(seed, at, byte);
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut with_header = vec![0, 1, 0, 0];
        with_header.extend_from_slice(&bytes);
        let _ = PointCloud2::decode(&bytes);
        let _ = PointCloud2::decode(&with_header);
        let _ = acres_msgs::acres_interfaces::Observation::decode(&with_header);
    }
}

#[test]
fn a_string_without_nul_and_a_bad_bool_are_typed_errors() {
    use acres_msgs::std_msgs::Header;
    let header = Header { frame_id: "map".into(), ..Default::default() };
    let mut bytes = header.encode();
    let last = bytes.len() - 1;
    bytes[last] = b'!';
    assert_eq!(Header::decode(&bytes), Err(CdrError::MissingNul { at: 12, len: 4 }));
    bytes[last] = 0;
    bytes[4 + 12] = 0xff; // the first letter (offsets in errors count from the header end)
    assert_eq!(Header::decode(&bytes), Err(CdrError::InvalidUtf8 { at: 12 }));

    let cloud = PointCloud2 { is_dense: true, ..Default::default() };
    let mut bytes = cloud.encode();
    let last = bytes.len() - 1;
    bytes[last] = 7;
    assert!(matches!(PointCloud2::decode(&bytes), Err(CdrError::InvalidBool { value: 7, .. })));
}

#[test]
fn time_from_seconds_floors_and_keeps_nanoseconds_in_range() {
    use acres_msgs::builtin_interfaces::Time;
    assert_eq!(Time::from_secs_f64(-1.7), Time { sec: -2, nanosec: 300_000_000 });
    assert_eq!(Time::from_secs_f64(1.7), Time { sec: 1, nanosec: 700_000_000 });
    assert_eq!(Time::from_secs_f64(12.5).as_secs_f64(), 12.5);
    assert_eq!(Time::from_secs_f64(f64::NAN), Time::default());
}

#[test]
fn nan_and_infinities_travel_in_json_and_come_back() {
    use acres_msgs::acres_interfaces::Observation;
    use acres_msgs::sensor_msgs::LaserScan;
    let obs = Observation {
        remaining_m: f64::NAN,
        ahead_m: f64::INFINITY,
        hold_since_s: f64::NEG_INFINITY,
        energy_estimate_mj: 1.25,
        ..Default::default()
    };
    let json = serde_json::to_value(&obs).expect("serializes");
    assert_eq!(json["remaining_m"], serde_json::Value::Null);
    assert_eq!(json["ahead_m"], "inf");
    assert_eq!(json["hold_since_s"], "-inf");
    assert_eq!(json["energy_estimate_mj"], 1.25);
    let back: Observation = serde_json::from_value(json).expect("deserializes");
    assert!(back.remaining_m.is_nan());
    assert_eq!((back.ahead_m, back.hold_since_s), (f64::INFINITY, f64::NEG_INFINITY));
    // CDR carries the same bits.
    assert_eq!(Observation::decode(&obs.encode()).expect("decodes").encode(), obs.encode());
    // A point that is not given (an event's `hold_at` but on `shield_hold`) is null, not 0.
    let e = acres_msgs::acres_interfaces::SkillEvent {
        hold_at: acres_msgs::geometry_msgs::Point { x: f64::NAN, y: f64::NAN, z: f64::NAN },
        ..Default::default()
    };
    let json = serde_json::to_value(&e).expect("serializes");
    assert_eq!(json["hold_at"], serde_json::json!({"x": null, "y": null, "z": null}));
    let back: acres_msgs::acres_interfaces::SkillEvent = serde_json::from_value(json).expect("deserializes");
    assert!(back.hold_at.x.is_nan() && back.hold_at.y.is_nan() && back.hold_at.z.is_nan());

    let scan = LaserScan {
        ranges: vec![1.5, f32::INFINITY, f32::NAN],
        range_max: f32::INFINITY,
        ..Default::default()
    };
    let text = serde_json::to_string(&scan).expect("serializes");
    assert!(text.contains(r#""ranges":[1.5,"inf",null]"#), "{text}");
    let back: LaserScan = serde_json::from_str(&text).expect("deserializes");
    assert_eq!(back.ranges[..2], [1.5, f32::INFINITY]);
    assert!(back.ranges[2].is_nan());
    assert_eq!(back.range_max, f32::INFINITY);
    assert!(serde_json::from_str::<LaserScan>(&text.replace(r#""inf""#, r#""far""#)).is_err());
}
