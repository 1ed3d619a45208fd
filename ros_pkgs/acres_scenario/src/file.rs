//! The file form of a scenario as serde reads and writes it: unknown keys are denied at every
//! level, optional keys that are present must hold a value, and words from a closed set are
//! read with a message that lists the set. `check` turns a [`ScenarioFile`] into a
//! [`Scenario`](super::Scenario).

use serde::{Deserialize, Serialize};

use acres_farm::objects::{ObjectKind, Place, PlaceLeg};
use acres_farm::Condition;

use super::types::{
    de_choice, object, object_present, present, some_choice, Choice, Event, EventKind, Limits, Obj, Operator,
    Recovery, Sensing, ServerOptions, Start, Success, When,
};

/// The default of `map`.
pub(crate) fn default_map() -> String {
    "default".into()
}

/// The default of `local_planner`.
pub(crate) fn default_local_planner() -> String {
    "default".into()
}

/// A whole scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScenarioFile {
    pub schema: String,
    pub id: String,
    pub tier: u32,
    pub title: String,
    #[serde(default, deserialize_with = "present")]
    pub notes: Option<String>,
    pub instruction: String,
    pub fields: Vec<String>,
    #[serde(default = "default_map")]
    pub map: String,
    #[serde(default)]
    pub start: Start,
    #[serde(default, deserialize_with = "de_choice")]
    pub condition: Condition,
    #[serde(default)]
    pub deadline_s: Option<f64>,
    #[serde(default)]
    pub fuel_limit_mj: Option<f64>,
    #[serde(default)]
    pub events: Vec<Obj<EventFile>>,
    #[serde(default, deserialize_with = "object_present")]
    pub operator: Option<Operator>,
    #[serde(default, deserialize_with = "object")]
    pub limits: Limits,
    #[serde(default, deserialize_with = "object")]
    pub server: ServerOptions,
    #[serde(default)]
    pub skills: Vec<String>,
    #[serde(default = "default_local_planner")]
    pub local_planner: String,
    #[serde(default, deserialize_with = "object")]
    pub recovery: Recovery,
    #[serde(default, deserialize_with = "object")]
    pub sensing: Sensing,
    #[serde(deserialize_with = "object")]
    pub success: Success,
}

/// The `type` of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    ObjectAdd,
    ObjectRemove,
    Request,
}

impl Choice for EventType {
    const WHAT: &'static str = "event type";
    fn all() -> &'static [(&'static str, Self)] {
        &[
            ("object_add", EventType::ObjectAdd),
            ("object_remove", EventType::ObjectRemove),
            ("request", EventType::Request),
        ]
    }
}

impl EventType {
    /// The word of the file form.
    pub fn name(self) -> &'static str {
        EventType::all().iter().find(|(_, v)| *v == self).map_or("?", |(n, _)| n)
    }
}

/// One event, flat as in the file: timing keys, `type`, and the keys of that type.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventFile {
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub t: Option<f64>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub after_seen: Option<u32>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub delay_s: Option<f64>,
    #[serde(rename = "type", deserialize_with = "de_choice")]
    pub kind: EventType,
    #[serde(default, deserialize_with = "object_present", skip_serializing_if = "Option::is_none")]
    pub object: Option<ObjectFile>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Serialize for EventType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The `object` of an `object_add` event.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObjectFile {
    pub id: u32,
    #[serde(deserialize_with = "de_choice")]
    pub kind: ObjectKind,
    #[serde(deserialize_with = "object")]
    pub place: PlaceFile,
}

/// A place with the keys of all three forms; `check` decides which form it is.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlaceFile {
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub y: Option<f64>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub yaw: Option<f64>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub route_to: Option<String>,
    #[serde(default, deserialize_with = "some_choice", skip_serializing_if = "Option::is_none")]
    pub leg: Option<PlaceLeg>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub at_m: Option<f64>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub loop_of: Option<String>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub at_fraction: Option<f64>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub across: Option<bool>,
}

impl PlaceFile {
    /// The keys present, in file-format order.
    pub fn keys(&self) -> Vec<&'static str> {
        let present = [
            ("x", self.x.is_some()),
            ("y", self.y.is_some()),
            ("yaw", self.yaw.is_some()),
            ("route_to", self.route_to.is_some()),
            ("leg", self.leg.is_some()),
            ("at_m", self.at_m.is_some()),
            ("loop_of", self.loop_of.is_some()),
            ("at_fraction", self.at_fraction.is_some()),
            ("across", self.across.is_some()),
        ];
        present.into_iter().filter(|(_, p)| *p).map(|(k, _)| k).collect()
    }

    /// The file form of a place.
    pub fn from_place(place: &Place) -> PlaceFile {
        match place {
            Place::Xy { x, y, yaw } => {
                PlaceFile { x: Some(*x), y: Some(*y), yaw: Some(*yaw), ..Default::default() }
            }
            Place::RouteTo { route_to, leg, at_m, across } => PlaceFile {
                route_to: Some(route_to.clone()),
                leg: Some(*leg),
                at_m: Some(*at_m),
                across: Some(*across),
                ..Default::default()
            },
            Place::LoopOf { loop_of, at_fraction, across } => PlaceFile {
                loop_of: Some(loop_of.clone()),
                at_fraction: Some(*at_fraction),
                across: Some(*across),
                ..Default::default()
            },
        }
    }
}

impl EventFile {
    /// The file form of an event.
    pub fn from_event(e: &Event) -> EventFile {
        let (t, after_seen, delay_s) = match e.when {
            When::At { t_s } => (Some(t_s), None, None),
            When::AfterSeen { id, delay_s } => (None, Some(id), Some(delay_s)),
        };
        let mut f = EventFile {
            t,
            after_seen,
            delay_s,
            kind: EventType::Request,
            object: None,
            id: None,
            text: None,
        };
        match &e.what {
            EventKind::ObjectAdd { id, kind, place } => {
                f.kind = EventType::ObjectAdd;
                f.object = Some(ObjectFile { id: *id, kind: *kind, place: PlaceFile::from_place(place) });
            }
            EventKind::ObjectRemove { id } => {
                f.kind = EventType::ObjectRemove;
                f.id = Some(*id);
            }
            EventKind::Request { text } => f.text = Some(text.clone()),
        }
        f
    }
}

/// Exact sensing is left out of the written form (files and run rows as before the key).
fn sensing_off(s: &&Sensing) -> bool {
    s.is_off()
}

/// The file form written by `Scenario`'s `Serialize`: every key, defaults included (but exact
/// `sensing`).
#[derive(Serialize)]
pub(crate) struct ScenarioOut<'a> {
    pub schema: &'a str,
    pub id: &'a str,
    pub tier: u32,
    pub title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<&'a str>,
    pub instruction: &'a str,
    pub fields: &'a [String],
    pub map: &'a str,
    pub start: Start,
    pub condition: Condition,
    pub deadline_s: Option<f64>,
    pub fuel_limit_mj: Option<f64>,
    pub events: Vec<EventFile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<&'a Operator>,
    pub limits: &'a Limits,
    pub server: &'a ServerOptions,
    pub skills: &'a [String],
    pub local_planner: &'a str,
    pub recovery: &'a Recovery,
    #[serde(skip_serializing_if = "sensing_off")]
    pub sensing: &'a Sensing,
    pub success: &'a Success,
}
