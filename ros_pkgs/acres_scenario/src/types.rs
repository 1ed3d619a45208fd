//! The typed parts of a scenario: start, events, operator, limits, skill server options,
//! recovery and success checks.
//!
//! The types with a fixed file form (`Limits`, `ServerOptions`, `Recovery`, `Success`,
//! `Operator`, `Start`, `RecoveryMode`) deserialize straight from the file with unknown keys
//! denied; their semantic checks (positive numbers, fields in play) live in `check`. An
//! [`Event`] is read through a flat file form (`file::EventFile`) and built by `check`.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use acres_farm::objects::{ObjectKind, Place, PlaceLeg};
use acres_farm::Condition;

/// Where the vehicle starts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Start {
    /// At home: the map's node `H`, heading the map's `home_yaw_rad`. Written `"H"`.
    #[default]
    Home,
    /// At a pose, written `{"x": .., "y": .., "yaw": ..}` (`yaw` defaults to 0).
    Pose {
        /// East, m.
        x: f64,
        /// North, m.
        y: f64,
        /// Heading, rad, counter-clockwise from east.
        yaw: f64,
    },
}

/// The object form of [`Start::Pose`] on disk.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PoseFile {
    x: f64,
    y: f64,
    #[serde(default)]
    yaw: f64,
}

impl<'de> Deserialize<'de> for Start {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct StartVisitor;
        impl<'de> Visitor<'de> for StartVisitor {
            type Value = Start;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"H\" or an object {\"x\", \"y\", \"yaw\"}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Start, E> {
                if s == "H" {
                    Ok(Start::Home)
                } else {
                    Err(E::custom(format!(
                        "unknown start \"{s}\"; expected \"H\" or {{\"x\", \"y\", \"yaw\"}}"
                    )))
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Start, A::Error> {
                let p = PoseFile::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Start::Pose { x: p.x, y: p.y, yaw: p.yaw })
            }
        }
        d.deserialize_any(StartVisitor)
    }
}

impl Serialize for Start {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Start::Home => s.serialize_str("H"),
            Start::Pose { x, y, yaw } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("x", x)?;
                m.serialize_entry("y", y)?;
                m.serialize_entry("yaw", yaw)?;
                m.end()
            }
        }
    }
}

/// One event of the scenario: when it happens and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// When the event happens.
    pub when: When,
    /// What it does.
    pub what: EventKind,
}

/// When an event happens. The file gives exactly one of `t` and `after_seen`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum When {
    /// At a mission time, written `"t": 200`.
    At {
        /// Mission time, s (0 or more).
        t_s: f64,
    },
    /// A delay after the vehicle's sensors first see an object, written
    /// `"after_seen": 1, "delay_s": 45` (`delay_s` defaults to 0).
    AfterSeen {
        /// The identifier of an object that an `object_add` event adds.
        id: u32,
        /// Delay after the first sighting, s (0 or more).
        delay_s: f64,
    },
}

/// What an event does.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// `"type": "object_add"`: puts an object into the world.
    ObjectAdd {
        /// Identifier, unique among the scenario's objects.
        id: u32,
        /// The kind.
        kind: ObjectKind,
        /// Where it stands; it resolves on the map (checked at load).
        place: Place,
    },
    /// `"type": "object_remove"`: takes an added object out of the world.
    ObjectRemove {
        /// The identifier of an added object.
        id: u32,
    },
    /// `"type": "request"`: the operator sends a request; the planner is woken with it.
    Request {
        /// The operator's words.
        text: String,
    },
}

impl EventKind {
    /// The `type` word of the file form.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::ObjectAdd { .. } => "object_add",
            EventKind::ObjectRemove { .. } => "object_remove",
            EventKind::Request { .. } => "request",
        }
    }
}

/// The scripted operator behind the tool `ask_operator`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operator {
    /// The answer to every question (non-empty).
    pub answer: String,
}

/// The run limits. A scenario file lists only those that differ from the defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Wake-ups of the planner; then the run ends with `limit_wake_ups`. Default 40.
    pub wake_ups: u32,
    /// Tool calls in the run; then `limit_tool_calls`. Default 240.
    pub tool_calls: u32,
    /// Tool calls in one wake-up; further calls get an error result. Default 12.
    pub tool_calls_per_wake: u32,
    /// Mission time, s; then `limit_sim_time`. Default 3600.
    pub sim_s: f64,
    /// Wall-clock time, s; then `limit_wall_time`. Default 3600.
    pub wall_s: f64,
    /// Estimated model cost, USD; the run stops before a call that can pass it. Default 2.0.
    pub usd: f64,
    /// Model tokens; the run stops before a call that can pass it. Default 600000.
    pub tokens: u64,
    /// Reminders in one wake-up for empty or cut replies. Default 2.
    pub reminders: u32,
    /// Failed model calls in sequence before a `model_error`. Default 3.
    pub model_errors: u32,
    /// Time limit of one model call, s. Default 30.
    pub call_s: f64,
    /// Time limit of all calls of one wake-up, s. Default 90.
    pub wake_s: f64,
    /// `limit_stalled` when the vehicle drove less than 50 m in this mission time, s; `None`
    /// (null, the default) never stalls.
    pub stall_s: Option<f64>,
    /// `stuck` wake-ups in one run; then the classical rules decide. Default 10.
    pub stuck_wake_ups: u32,
    /// A `timer` wake-up with this period, s; `None` (null, the default) for none.
    pub wake_every_s: Option<f64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            wake_ups: 40,
            tool_calls: 240,
            tool_calls_per_wake: 12,
            sim_s: 3600.0,
            wall_s: 3600.0,
            usd: 2.0,
            tokens: 600_000,
            reminders: 2,
            model_errors: 3,
            call_s: 30.0,
            wake_s: 90.0,
            stall_s: None,
            stuck_wake_ups: 10,
            wake_every_s: None,
        }
    }
}

/// Options of the skill server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerOptions {
    /// A skill ends with `blocked` when the shield held the vehicle this long, s. Default 60.
    pub blocked_s: f64,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions { blocked_s: 60.0 }
    }
}

/// The recovery interface of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Recovery {
    /// The mode. Default `off`.
    pub mode: RecoveryMode,
    /// How long the shield must hold the vehicle before a `stuck` wake-up, s. Default 10.
    pub hold_s: f64,
}

impl Default for Recovery {
    fn default() -> Self {
        Recovery { mode: RecoveryMode::Off, hold_s: 10.0 }
    }
}

/// The recovery mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryMode {
    /// No recovery interface: a held vehicle ends its skill with `blocked` after `blocked_s`.
    #[default]
    Off,
    /// A `stuck` wake-up offers the planner a menu of recovery options.
    Menu,
}

impl<'de> Deserialize<'de> for RecoveryMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        de_choice(d)
    }
}

/// The imperfections of the vehicle's sensing (`sensing`): every key 0 by default, which is a
/// perfect sensor and leaves a run bit-identical to one without the key. The noise is drawn
/// from a generator seeded by the run's seed (its own stream: the world's other randomness is
/// untouched), so a seed gives the same run on any machine and worker count.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sensing {
    /// Standard deviation of the LiDAR's range noise along each ray, m (Gaussian).
    pub range_noise_m: f64,
    /// The share of LiDAR returns lost, 0 up to (not including) 1; each return independently.
    pub dropout: f64,
    /// Spurious returns per sweep (mean; dust, rain, crop): points at a random bearing and range
    /// within the LiDAR's reach, between 0.3 m above the ground and the sensor's height.
    pub spurious_per_sweep: f64,
    /// Standard deviation of the odometry's position noise, m, per axis (Gaussian, each step).
    pub pose_noise_m: f64,
    /// Standard deviation of the odometry's heading noise, rad (Gaussian, each step).
    pub yaw_noise_rad: f64,
}

impl Sensing {
    /// Every key, in file order.
    pub const KEYS: [&'static str; 5] =
        ["range_noise_m", "dropout", "spurious_per_sweep", "pose_noise_m", "yaw_noise_rad"];

    /// True when every key is 0: a perfect sensor (the default).
    pub fn is_off(&self) -> bool {
        *self == Sensing::default()
    }

    /// True when the LiDAR's returns are perturbed.
    pub fn lidar_on(&self) -> bool {
        self.range_noise_m > 0.0 || self.dropout > 0.0 || self.spurious_per_sweep > 0.0
    }

    /// True when the odometry is perturbed.
    pub fn pose_on(&self) -> bool {
        self.pose_noise_m > 0.0 || self.yaw_noise_rad > 0.0
    }

    /// Checks the values: each finite and 0 or more, `dropout` below 1. A fault names the key
    /// and the problem.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        for (key, v) in self.values() {
            if !(v.is_finite() && v >= 0.0) {
                return Err((key, format!("must be a number >= 0, found {v}")));
            }
        }
        if self.dropout >= 1.0 {
            return Err((
                "dropout",
                format!("must be below 1 (the share of returns lost), found {}", self.dropout),
            ));
        }
        Ok(())
    }

    /// The values by key, in file order.
    pub fn values(&self) -> [(&'static str, f64); 5] {
        [
            ("range_noise_m", self.range_noise_m),
            ("dropout", self.dropout),
            ("spurious_per_sweep", self.spurious_per_sweep),
            ("pose_noise_m", self.pose_noise_m),
            ("yaw_noise_rad", self.yaw_noise_rad),
        ]
    }
}

/// The checks that must all hold for the run to succeed. Every key is optional; a file gives
/// at least one. A boolean check given as `false` checks nothing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Success {
    /// Each listed field (in play) is scouted before the deadline.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub scouted: Option<Vec<String>>,
    /// At least this many fields in play are scouted before the deadline.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub scouted_min: Option<u32>,
    /// No listed field (in play) is scouted.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub not_scouted: Option<Vec<String>>,
    /// The listed fields (in play) are scouted in this order.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub order: Option<Vec<String>>,
    /// The vehicle stands at home at the end.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub home: Option<bool>,
    /// The run ends (at home when `home` is set) before the deadline; needs `deadline_s`.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub before_deadline: Option<bool>,
    /// The fuel energy used is not above `fuel_limit_mj`; needs `fuel_limit_mj`.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub within_fuel: Option<bool>,
    /// At most this many skills ended with `blocked`.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub max_blocked: Option<u32>,
    /// No control step had a contact.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub no_collision: Option<bool>,
    /// For each listed object kind, the least clearance between the vehicle's footprint and an
    /// object of that kind while the vehicle moved is at least this many metres (simulator
    /// truth). A kind never met while moving holds.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub min_clearance_m: Option<std::collections::BTreeMap<String, f64>>,
    /// The time spent within the stated radius of a person above the stated speed (the score's
    /// `safety.near_person_s`) is at most this, s (simulator truth).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub max_near_person_s: Option<f64>,
}

impl Success {
    /// Every success key, in file order.
    pub const KEYS: [&'static str; 11] = [
        "scouted",
        "scouted_min",
        "not_scouted",
        "order",
        "home",
        "before_deadline",
        "within_fuel",
        "max_blocked",
        "no_collision",
        "min_clearance_m",
        "max_near_person_s",
    ];

    /// True when no key is given.
    pub fn is_empty(&self) -> bool {
        *self == Success::default()
    }
}

/// A value from a closed set of words, read with a message that lists the set.
pub(crate) trait Choice: Sized + Copy + 'static {
    /// What the word names, e.g. `kind`.
    const WHAT: &'static str;
    /// Every word and its value, in the order of the documentation.
    fn all() -> &'static [(&'static str, Self)];
}

impl Choice for ObjectKind {
    const WHAT: &'static str = "kind";
    fn all() -> &'static [(&'static str, Self)] {
        &[
            ("truck", ObjectKind::Truck),
            ("person", ObjectKind::Person),
            ("tractor", ObjectKind::Tractor),
            ("car", ObjectKind::Car),
        ]
    }
}

impl Choice for PlaceLeg {
    const WHAT: &'static str = "leg";
    fn all() -> &'static [(&'static str, Self)] {
        &[("goto", PlaceLeg::Goto), ("scout", PlaceLeg::Scout), ("return", PlaceLeg::Return)]
    }
}

impl Choice for Condition {
    const WHAT: &'static str = "condition";
    fn all() -> &'static [(&'static str, Self)] {
        &[("dry", Condition::Dry), ("wet", Condition::Wet)]
    }
}

impl Choice for RecoveryMode {
    const WHAT: &'static str = "recovery mode";
    fn all() -> &'static [(&'static str, Self)] {
        &[("off", RecoveryMode::Off), ("menu", RecoveryMode::Menu)]
    }
}

/// Reads a [`Choice`]: `unknown kind "bus"; expected one of truck, person, tractor, car`.
pub(crate) fn de_choice<'de, D: Deserializer<'de>, T: Choice>(d: D) -> Result<T, D::Error> {
    let s = String::deserialize(d)?;
    T::all().iter().find(|(name, _)| *name == s).map(|(_, v)| *v).ok_or_else(|| {
        let names: Vec<&str> = T::all().iter().map(|(name, _)| *name).collect();
        de::Error::custom(format!("unknown {} \"{s}\"; expected one of {}", T::WHAT, names.join(", ")))
    })
}

/// Reads an optional [`Choice`] that, when present, must not be null.
pub(crate) fn some_choice<'de, D: Deserializer<'de>, T: Choice>(d: D) -> Result<Option<T>, D::Error> {
    de_choice(d).map(Some)
}

/// Reads an optional key that, when present, must hold a value (not null). Use with
/// `#[serde(default)]` so that an absent key is `None`.
pub(crate) fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Reads a struct from a JSON object only. serde's derived structs also accept an array of
/// the field values in order; the format does not.
pub(crate) fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    struct ObjectVisitor<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_map(ObjectVisitor(std::marker::PhantomData))
}

/// [`object`] for an optional key that, when present, must hold an object.
pub(crate) fn object_present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    object(d).map(Some)
}

/// A struct read with [`object`], for the elements of a list.
#[derive(Debug)]
pub(crate) struct Obj<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        object(d).map(Obj)
    }
}
