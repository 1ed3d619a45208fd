//! The scenario format `acres-harness-scenario-1`: one JSON file per mission, read and checked
//! before any run starts.
//!
//! A scenario names the fields in play, the operator's instruction, the start, the hard limits
//! (deadline, fuel), the scripted events (objects that come and go, operator requests), the run
//! limits, the skill server's options, and the success checks. `docs/scenario-format.md`
//! documents every key; `harness/schemas/scenario.schema.json` is the same format as JSON Schema.
//!
//! ```json
//! {"schema": "acres-harness-scenario-1", "id": "t1_01_one_field", "tier": 1,
//!  "title": "One field", "instruction": "Scout F53 and come home.", "fields": ["F53"],
//!  "success": {"scouted": ["F53"], "home": true, "no_collision": true}}
//! ```
//!
//! Events are flat objects: a time (`"t"`) or a sighting (`"after_seen"` with `"delay_s"`), a
//! `"type"` and the keys of that type:
//!
//! ```json
//! {"t": 0, "type": "object_add", "object": {"id": 1, "kind": "truck", "place": {"loop_of": "F53", "at_fraction": 0.5}}}
//! {"after_seen": 1, "delay_s": 45, "type": "object_remove", "id": 1}
//! {"t": 200, "type": "request", "text": "Come home after this field."}
//! ```
//!
//! # Errors
//!
//! [`load`] and [`load_all`] read the file with serde (unknown keys denied at every level, the
//! JSON path of a fault from `serde_path_to_error`) and then check the meaning against the map:
//! fields exist and are unique, places resolve and lie in the corridor, events name added
//! objects, success checks name fields in play. Every error is one line,
//! `<file>: at <json path>: <message>`, e.g.
//! `scenarios/x.json: at events[2].object.kind: unknown kind "bus"; expected one of truck, person, tractor, car`.
//!
//! **Invariant:** a [`Scenario`] value has passed every check; callers never re-check it, and
//! every place of its events resolves on [`Scenario::map_data`].
//!
//! # Layout
//!
//! - [`types`]: the public parts (start, events, limits, server options, recovery, success).
//! - `file`: the serde file form; `check`: the semantic checks; [`error`]: [`ScenarioError`].
//! - [`local_planner`]: the key `local_planner` (in-tree planners, process plugins).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

mod check;
pub mod error;
mod file;
pub mod local_planner;
pub mod types;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use acres_farm::objects::{Object, Place, PlaceError};
use acres_farm::{LaneGraph, Map, MapError, Pose};

pub use acres_farm::objects::{ObjectKind, PlaceLeg};
pub use acres_farm::Condition;
pub use error::ScenarioError;
pub use types::{
    Event, EventKind, Limits, Operator, Recovery, RecoveryMode, Sensing, ServerOptions, Start, Success, When,
};

/// The schema name a scenario file must carry in its `schema` key.
pub const SCENARIO_SCHEMA: &str = "acres-harness-scenario-1";

/// A loaded, checked scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The name: letters, digits, `_` and `-`, no `__`; unique in one load. Shipped scenarios
    /// are `scenarios/<id>.json`.
    pub id: String,
    /// The tier, a label of 1 or more (the shipped suite: 1 no objects, 2 objects in the way).
    pub tier: u32,
    /// A short title.
    pub title: String,
    /// Notes for people: what the scenario tests and what its limits must allow.
    pub notes: Option<String>,
    /// The text the planner gets at the start.
    pub instruction: String,
    /// The fields in play, each on the map, each once.
    pub fields: Vec<String>,
    /// The map name; the file is `<maps_dir>/<map>.json`. Default `default`.
    pub map: String,
    /// Where the vehicle starts. Default home.
    pub start: Start,
    /// The condition set of ACRES Core (and the cost table). Default dry.
    pub condition: Condition,
    /// The deadline, mission seconds, if any.
    pub deadline_s: Option<f64>,
    /// The fuel energy limit, MJ, if any.
    pub fuel_limit_mj: Option<f64>,
    /// The events, in file order.
    pub events: Vec<Event>,
    /// The scripted operator behind `ask_operator`, if any.
    pub operator: Option<Operator>,
    /// The run limits (defaults where the file gives none).
    pub limits: Limits,
    /// The keys of `limits` the file gives (a model file's call limits apply only where the
    /// scenario gives none).
    pub limits_given: std::collections::BTreeSet<String>,
    /// Options of the skill server.
    pub server: ServerOptions,
    /// Folders of learned skills, relative to the scenario file (`acres_vehicle::learned` loads them).
    pub skills: Vec<String>,
    /// The local planner as the file gives it (checked: [`Scenario::local_planner_key`]).
    pub local_planner: String,
    /// The recovery interface.
    pub recovery: Recovery,
    /// The imperfections of the vehicle's sensing (default: none).
    pub sensing: Sensing,
    /// The success checks.
    pub success: Success,
    /// The file it was loaded from, as given.
    pub file: PathBuf,
    /// The loaded map named by `map`, shared between scenarios of one load.
    pub map_data: Arc<Map>,
}

impl Scenario {
    /// The local planner (`local_planner`, checked when the scenario was loaded).
    pub fn local_planner_key(&self) -> local_planner::LocalPlannerKey {
        local_planner::LocalPlannerKey::parse(&self.local_planner, &self.file)
            .expect("local_planner was checked when the scenario was loaded")
    }

    /// The start pose: home with the map's `home_yaw_rad`, or the given pose.
    pub fn start_pose(&self) -> Pose {
        match self.start {
            Start::Home => {
                let h = self.map_data.home();
                Pose { x: h.x, y: h.y, yaw: self.map_data.home_yaw_rad }
            }
            Start::Pose { x, y, yaw } => Pose { x, y, yaw },
        }
    }

    /// The map.
    pub fn map(&self) -> &Map {
        &self.map_data
    }

    /// The lane graph of the map.
    pub fn lane_graph(&self) -> LaneGraph {
        LaneGraph::new(&self.map_data)
    }

    /// True when `field` is in play.
    pub fn in_play(&self, field: &str) -> bool {
        self.fields.iter().any(|f| f == field)
    }

    /// Resolves a place on this scenario's map.
    pub fn resolve(&self, place: &Place) -> Result<Pose, PlaceError> {
        place.resolve(&self.map_data, &self.lane_graph())
    }

    /// The object an `object_add` event puts into the world, with its pose; `None` for other
    /// events. The places of the scenario's own events always resolve (checked at load).
    pub fn object(&self, event: &Event) -> Option<Object> {
        match &event.what {
            EventKind::ObjectAdd { id, kind, place } => {
                self.resolve(place).ok().map(|pose| Object { id: *id, kind: *kind, pose })
            }
            _ => None,
        }
    }

    /// Every object the scenario adds, with its pose, in event order.
    pub fn objects(&self) -> Vec<Object> {
        self.events.iter().filter_map(|e| self.object(e)).collect()
    }
}

/// Writes the file form with every key (defaults included, `schema` first); reading it back
/// gives an equal scenario.
impl Serialize for Scenario {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        file::ScenarioOut {
            schema: SCENARIO_SCHEMA,
            id: &self.id,
            tier: self.tier,
            title: &self.title,
            notes: self.notes.as_deref(),
            instruction: &self.instruction,
            fields: &self.fields,
            map: &self.map,
            start: self.start,
            condition: self.condition,
            deadline_s: self.deadline_s,
            fuel_limit_mj: self.fuel_limit_mj,
            events: self.events.iter().map(file::EventFile::from_event).collect(),
            operator: self.operator.as_ref(),
            limits: &self.limits,
            server: &self.server,
            skills: &self.skills,
            local_planner: &self.local_planner,
            recovery: &self.recovery,
            sensing: &self.sensing,
            success: &self.success,
        }
        .serialize(s)
    }
}

/// Loads and checks one scenario file; its map is `<maps_dir>/<map>.json`.
pub fn load(file: &Path, maps_dir: &Path) -> Result<Scenario, ScenarioError> {
    Loader::new(maps_dir).load(file)
}

/// Parses and checks scenario text; `file` is used in error messages and kept in
/// [`Scenario::file`].
pub fn parse(text: &str, file: &Path, maps_dir: &Path) -> Result<Scenario, ScenarioError> {
    Loader::new(maps_dir).parse(text, file)
}

/// Loads and checks every scenario of the inputs before anything runs. A folder means its
/// top-level `*.json` files sorted by name; a file is taken as it is. Scenarios come back in
/// input order; each map is loaded once and shared. A scenario id that appears twice, an
/// unreadable input, a folder without scenario files, or any invalid scenario is an error.
pub fn load_all(inputs: &[PathBuf], maps_dir: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let mut loader = Loader::new(maps_dir);
    let mut out: Vec<Scenario> = Vec::new();
    for input in inputs {
        let files = if input.is_dir() { folder_files(input)? } else { vec![input.clone()] };
        for file in files {
            let sc = loader.load(&file)?;
            if let Some(first) = out.iter().find(|s| s.id == sc.id) {
                return Err(ScenarioError::DuplicateId { file, id: sc.id, first: first.file.clone() });
            }
            out.push(sc);
        }
    }
    Ok(out)
}

/// The top-level `*.json` files of a folder, sorted by name.
fn folder_files(dir: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    let io = |source| ScenarioError::Io { file: dir.to_path_buf(), what: "folder", source };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    if files.is_empty() {
        return Err(ScenarioError::EmptyFolder { dir: dir.to_path_buf() });
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

/// Reads scenarios and keeps each map it loaded.
struct Loader<'a> {
    maps_dir: &'a Path,
    maps: BTreeMap<String, Arc<Map>>,
}

impl<'a> Loader<'a> {
    fn new(maps_dir: &'a Path) -> Self {
        Loader { maps_dir, maps: BTreeMap::new() }
    }

    fn load(&mut self, file: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(file).map_err(|source| ScenarioError::Io {
            file: file.to_path_buf(),
            what: "file",
            source,
        })?;
        self.parse(&text, file)
    }

    fn parse(&mut self, text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
        let invalid = |(path, message): check::Fault| ScenarioError::Invalid {
            file: file.to_path_buf(),
            path,
            message,
        };
        let sf = read_file_form(text).map_err(invalid)?;
        check::header(&sf).map_err(invalid)?;
        let map = self.map(&sf.map).map_err(|m| invalid(("map".into(), m)))?;
        let mut sc = check::build(sf, file, map).map_err(invalid)?;
        sc.limits_given = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("limits").and_then(|l| l.as_object()).map(|o| o.keys().cloned().collect()))
            .unwrap_or_default();
        Ok(sc)
    }

    /// The map of that name, loaded once; the error is the message for the key `map`.
    fn map(&mut self, name: &str) -> Result<Arc<Map>, String> {
        if let Some(m) = self.maps.get(name) {
            return Ok(m.clone());
        }
        let path = self.maps_dir.join(format!("{name}.json"));
        let map = Map::load(&path).map_err(|e| match e {
            MapError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                format!(
                    "unknown map \"{name}\": there is no file {}; {}",
                    path.display(),
                    self.available_maps()
                )
            }
            e => format!("the map \"{name}\" cannot be loaded: {e}"),
        })?;
        let map = Arc::new(map);
        self.maps.insert(name.to_string(), map.clone());
        Ok(map)
    }

    /// `maps there: a, b` for the maps folder.
    fn available_maps(&self) -> String {
        let mut names: Vec<String> = std::fs::read_dir(self.maps_dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        names.sort();
        if names.is_empty() {
            format!("the maps folder {} holds no maps", self.maps_dir.display())
        } else {
            format!("maps there: {}", names.join(", "))
        }
    }
}

/// Reads the shape of a scenario: JSON syntax, a root object, the schema name, then the serde
/// form with the JSON path of the first fault.
fn read_file_form(text: &str) -> Result<file::ScenarioFile, check::Fault> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ("$".to_string(), format!("invalid JSON: {e}")))?;
    let Some(root) = value.as_object() else {
        return Err(("$".into(), format!("a scenario is a JSON object, found {}", json_kind(&value))));
    };
    match root.get("schema") {
        None => return Err(("$".into(), format!("missing key \"schema\"; expected \"{SCENARIO_SCHEMA}\""))),
        Some(serde_json::Value::String(s)) if s == SCENARIO_SCHEMA => {}
        Some(serde_json::Value::String(s)) => {
            return Err(("schema".into(), format!("unknown schema \"{s}\"; expected \"{SCENARIO_SCHEMA}\"")));
        }
        Some(v) => {
            return Err((
                "schema".into(),
                format!("invalid type: {}, expected the string \"{SCENARIO_SCHEMA}\"", json_kind(v)),
            ));
        }
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = error::json_path(e.path());
        (path, error::tidy(e.inner()))
    })
}

/// The JSON type of a value, for messages.
fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
