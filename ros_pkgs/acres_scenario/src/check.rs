//! The semantic checks of a scenario, after serde has read its shape: names, numbers, fields on
//! the map, objects and their places, event references, and success checks. Each fault is a
//! `(JSON path, message)` pair; the loader adds the file.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use acres_farm::objects::{Place, PlaceError};
use acres_farm::{LaneGraph, Map, Vec2};

use super::file::{EventFile, EventType, PlaceFile, ScenarioFile};
use super::types::{Event, EventKind, Limits, Obj, Sensing, Start, Success, When};
use super::Scenario;

/// A fault: the JSON path and the message.
pub(crate) type Fault = (String, String);

fn fault(path: impl Into<String>, message: impl Into<String>) -> Fault {
    (path.into(), message.into())
}

/// Checks the keys that need no map: id, tier, title, instruction, the map name.
pub(crate) fn header(sf: &ScenarioFile) -> Result<(), Fault> {
    if sf.schema != super::SCENARIO_SCHEMA {
        // read_file_form already refused it; kept so that this check stands on its own.
        return Err(fault(
            "schema",
            format!("unknown schema \"{}\"; expected \"{}\"", sf.schema, super::SCENARIO_SCHEMA),
        ));
    }
    let id_ok = sf.id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && sf.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !sf.id.contains("__");
    if !id_ok {
        return Err(fault(
            "id",
            format!(
                "id \"{}\" is not a scenario name: use letters, digits, '_' and '-', start with a letter \
                 or digit, and no \"__\" (it separates the parts of a run folder's name)",
                sf.id
            ),
        ));
    }
    if sf.tier < 1 {
        return Err(fault(
            "tier",
            format!("tier {} is not a tier; tiers are labels, integers of 1 or more", sf.tier),
        ));
    }
    for (key, text) in [("title", &sf.title), ("instruction", &sf.instruction)] {
        if text.trim().is_empty() {
            return Err(fault(key, "must not be empty"));
        }
    }
    let name_ok = !sf.map.is_empty() && !sf.map.starts_with('.') && !sf.map.contains(['/', '\\']);
    if !name_ok {
        return Err(fault(
            "map",
            format!("map \"{}\" is not a map name (a file stem in the maps folder)", sf.map),
        ));
    }
    Ok(())
}

/// Checks the rest against the map and builds the scenario.
pub(crate) fn build(sf: ScenarioFile, file: &Path, map: Arc<Map>) -> Result<Scenario, Fault> {
    let map_fields = || map.fields.keys().cloned().collect::<Vec<_>>().join(", ");
    if sf.fields.is_empty() {
        return Err(fault("fields", format!("no fields in play; list at least one of {}", map_fields())));
    }
    for (i, f) in sf.fields.iter().enumerate() {
        if !map.fields.contains_key(f) {
            return Err(fault(
                format!("fields[{i}]"),
                format!("unknown field \"{f}\"; the map \"{}\" has {}", map.name, map_fields()),
            ));
        }
        if let Some(j) = sf.fields[..i].iter().position(|g| g == f) {
            return Err(fault(
                format!("fields[{i}]"),
                format!("field \"{f}\" is already listed at fields[{j}]"),
            ));
        }
    }
    if let Start::Pose { x, y, .. } = sf.start {
        if !map.in_corridor(Vec2::new(x, y)) {
            return Err(fault(
                "start",
                format!("the start ({x}, {y}) lies outside the corridor of the map \"{}\"", map.name),
            ));
        }
    }
    positive_opt("deadline_s", sf.deadline_s)?;
    positive_opt("fuel_limit_mj", sf.fuel_limit_mj)?;
    let events = events(&sf.events, &map)?;
    if let Some(op) = &sf.operator {
        if op.answer.trim().is_empty() {
            return Err(fault("operator.answer", "must not be empty"));
        }
    }
    limits(&sf.limits)?;
    positive("server.blocked_s", sf.server.blocked_s)?;
    skill_folders(&sf.skills)?;
    super::local_planner::LocalPlannerKey::check(&sf.local_planner, file)
        .map_err(|m| fault("local_planner", m))?;
    positive("recovery.hold_s", sf.recovery.hold_s)?;
    sensing(&sf.sensing)?;
    success(&sf.success, &sf.fields, sf.deadline_s, sf.fuel_limit_mj)?;
    Ok(Scenario {
        id: sf.id,
        tier: sf.tier,
        title: sf.title,
        notes: sf.notes,
        instruction: sf.instruction,
        fields: sf.fields,
        map: sf.map,
        start: sf.start,
        condition: sf.condition,
        deadline_s: sf.deadline_s,
        fuel_limit_mj: sf.fuel_limit_mj,
        events,
        operator: sf.operator,
        limits: sf.limits,
        limits_given: Default::default(),
        server: sf.server,
        skills: sf.skills,
        local_planner: sf.local_planner,
        recovery: sf.recovery,
        sensing: sf.sensing,
        success: sf.success,
        file: file.to_path_buf(),
        map_data: map,
    })
}

fn positive(path: &str, v: f64) -> Result<(), Fault> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(fault(path, format!("must be a positive number, found {v}")))
    }
}

fn positive_opt(path: &str, v: Option<f64>) -> Result<(), Fault> {
    v.map_or(Ok(()), |v| positive(path, v))
}

fn not_negative(path: &str, v: f64) -> Result<(), Fault> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(fault(path, format!("must be 0 or more, found {v}")))
    }
}

fn limits(l: &Limits) -> Result<(), Fault> {
    let counts = [
        ("wake_ups", l.wake_ups as u64),
        ("tool_calls", l.tool_calls as u64),
        ("tool_calls_per_wake", l.tool_calls_per_wake as u64),
        ("tokens", l.tokens),
        ("model_errors", l.model_errors as u64),
        ("stuck_wake_ups", l.stuck_wake_ups as u64),
    ];
    for (key, n) in counts {
        if n == 0 {
            return Err(fault(format!("limits.{key}"), "must be at least 1, found 0"));
        }
    }
    for (key, v) in
        [("sim_s", l.sim_s), ("wall_s", l.wall_s), ("usd", l.usd), ("call_s", l.call_s), ("wake_s", l.wake_s)]
    {
        positive(&format!("limits.{key}"), v)?;
    }
    positive_opt("limits.stall_s", l.stall_s)?;
    positive_opt("limits.wake_every_s", l.wake_every_s)
}

/// The keys each event type allows besides the timing keys and `type`.
fn type_keys(t: EventType) -> &'static str {
    match t {
        EventType::ObjectAdd => "object",
        EventType::ObjectRemove => "id",
        EventType::Request => "text",
    }
}

fn events(files: &[Obj<EventFile>], map: &Map) -> Result<Vec<Event>, Fault> {
    let graph = LaneGraph::new(map);
    let mut out = Vec::with_capacity(files.len());
    // Object id -> (event index, when) of its object_add.
    let mut added: BTreeMap<u32, (usize, When)> = BTreeMap::new();
    for (i, Obj(e)) in files.iter().enumerate() {
        let at = |k: &str| format!("events[{i}].{k}");
        let when = match (e.t, e.after_seen) {
            (Some(_), Some(_)) => {
                return Err(fault(format!("events[{i}]"), "an event has \"t\" or \"after_seen\", not both"));
            }
            (None, None) => {
                return Err(fault(
                    format!("events[{i}]"),
                    "an event needs \"t\" (s) or \"after_seen\" (an object id, with \"delay_s\")",
                ));
            }
            (Some(t_s), None) => {
                if e.delay_s.is_some() {
                    return Err(fault(at("delay_s"), "\"delay_s\" goes with \"after_seen\", not with \"t\""));
                }
                not_negative(&at("t"), t_s)?;
                When::At { t_s }
            }
            (None, Some(id)) => {
                let delay_s = e.delay_s.unwrap_or(0.0);
                not_negative(&at("delay_s"), delay_s)?;
                When::AfterSeen { id, delay_s }
            }
        };
        let given = [("object", e.object.is_some()), ("id", e.id.is_some()), ("text", e.text.is_some())];
        let own = type_keys(e.kind);
        for (key, present) in given {
            if present && key != own {
                return Err(fault(
                    at(key),
                    format!(
                        "key \"{key}\" does not belong to an event of type {}; its keys are t or after_seen \
                         (with delay_s), type, {own}",
                        e.kind.name()
                    ),
                ));
            }
        }
        let missing = || {
            fault(
                format!("events[{i}]"),
                format!("missing key \"{own}\" of an event of type {}", e.kind.name()),
            )
        };
        let what = match e.kind {
            EventType::ObjectAdd => {
                let o = e.object.as_ref().ok_or_else(missing)?;
                if let Some((j, _)) = added.get(&o.id) {
                    return Err(fault(
                        at("object.id"),
                        format!("object {} is already added by events[{j}]", o.id),
                    ));
                }
                let place = place(&o.place, &at("object.place"), map, &graph)?;
                added.insert(o.id, (i, when));
                EventKind::ObjectAdd { id: o.id, kind: o.kind, place }
            }
            EventType::ObjectRemove => EventKind::ObjectRemove { id: e.id.ok_or_else(missing)? },
            EventType::Request => {
                let text = e.text.clone().ok_or_else(missing)?;
                if text.trim().is_empty() {
                    return Err(fault(at("text"), "must not be empty"));
                }
                EventKind::Request { text }
            }
        };
        out.push(Event { when, what });
    }
    references(&out, &added)?;
    Ok(out)
}

/// Checks that removals and `after_seen` name added objects, that no object is removed twice or
/// before it is added, and that no object waits, through `after_seen`, on itself.
fn references(events: &[Event], added: &BTreeMap<u32, (usize, When)>) -> Result<(), Fault> {
    let ids = || {
        let v: Vec<String> = added.keys().map(u32::to_string).collect();
        if v.is_empty() {
            "no object is added".to_string()
        } else {
            format!("added objects: {}", v.join(", "))
        }
    };
    let mut removed: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        if let When::AfterSeen { id, .. } = e.when {
            if !added.contains_key(&id) {
                return Err(fault(
                    format!("events[{i}].after_seen"),
                    format!("no object_add event adds object {id}; {}", ids()),
                ));
            }
        }
        if let EventKind::ObjectRemove { id } = e.what {
            let Some((j, add_when)) = added.get(&id) else {
                return Err(fault(
                    format!("events[{i}].id"),
                    format!("no object_add event adds object {id}; {}", ids()),
                ));
            };
            if let Some(k) = removed.insert(id, i) {
                return Err(fault(
                    format!("events[{i}].id"),
                    format!("object {id} is already removed by events[{k}]"),
                ));
            }
            if let (When::At { t_s }, When::At { t_s: t_add }) = (e.when, add_when) {
                if t_s < *t_add {
                    return Err(fault(
                        format!("events[{i}].t"),
                        format!("object {id} is removed at {t_s} s, before events[{j}] adds it at {t_add} s"),
                    ));
                }
            }
        }
    }
    // after_seen chains of object_add events must end at an object added at a time.
    for (&id, &(i, _)) in added {
        let mut chain = vec![id];
        let mut cur = id;
        while let Some((_, When::AfterSeen { id: next, .. })) = added.get(&cur) {
            cur = *next;
            let cycle = chain.contains(&cur);
            chain.push(cur);
            if cycle {
                let text: Vec<String> = chain.iter().map(u32::to_string).collect();
                return Err(fault(
                    format!("events[{i}].after_seen"),
                    format!(
                        "object {id} can never be added: it waits on objects seen in a cycle ({})",
                        text.join(" -> ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The three forms of place, as `(form key, keys, required keys)`.
const PLACE_FORMS: [(&str, &[&str], &[&str]); 3] = [
    ("x", &["x", "y", "yaw"], &["x", "y"]),
    ("route_to", &["route_to", "leg", "at_m", "across"], &["route_to", "leg", "at_m"]),
    ("loop_of", &["loop_of", "at_fraction", "across"], &["loop_of", "at_fraction"]),
];

const PLACE_FORMS_TEXT: &str = "a place has one of three forms: {\"x\", \"y\", \"yaw\"}, \
     {\"route_to\", \"leg\", \"at_m\", \"across\"} or {\"loop_of\", \"at_fraction\", \"across\"}";

/// Decides the form of a place, resolves it on the map and checks that an x/y place lies in the
/// corridor.
fn place(pf: &PlaceFile, path: &str, map: &Map, graph: &LaneGraph) -> Result<Place, Fault> {
    let keys = pf.keys();
    let forms: Vec<_> = PLACE_FORMS
        .iter()
        .filter(|(_, all, _)| {
            let form_key = all[0];
            keys.contains(&form_key) || (form_key == "x" && keys.contains(&"y"))
        })
        .collect();
    let [(form, all, required)] = forms.as_slice() else {
        let found = if keys.is_empty() { "no keys".to_string() } else { format!("keys {}", keys.join(", ")) };
        return Err(fault(path, format!("{PLACE_FORMS_TEXT}; found {found}")));
    };
    if let Some(stray) = keys.iter().find(|k| !all.contains(k)) {
        let name = if *form == "x" {
            "an x/y"
        } else if *form == "route_to" {
            "a route_to"
        } else {
            "a loop_of"
        };
        return Err(fault(
            format!("{path}.{stray}"),
            format!("key \"{stray}\" does not belong to {name} place; its keys are {}", all.join(", ")),
        ));
    }
    if let Some(miss) = required.iter().find(|k| !keys.contains(k)) {
        return Err(fault(path, format!("missing key \"{miss}\" of a place {{\"{}\", ...}}", all[0])));
    }
    let across = pf.across.unwrap_or(false);
    let place = match *form {
        "x" => Place::Xy { x: pf.x.unwrap_or(0.0), y: pf.y.unwrap_or(0.0), yaw: pf.yaw.unwrap_or(0.0) },
        "route_to" => Place::RouteTo {
            route_to: pf.route_to.clone().unwrap_or_default(),
            leg: pf.leg.unwrap_or(acres_farm::objects::PlaceLeg::Goto),
            at_m: pf.at_m.unwrap_or(0.0),
            across,
        },
        _ => Place::LoopOf {
            loop_of: pf.loop_of.clone().unwrap_or_default(),
            at_fraction: pf.at_fraction.unwrap_or(0.0),
            across,
        },
    };
    let field_key = if *form == "route_to" { "route_to" } else { "loop_of" };
    place.resolve(map, graph).map_err(|e| match e {
        PlaceError::UnknownField(_) => fault(
            format!("{path}.{field_key}"),
            format!(
                "{e}; the map \"{}\" has {}",
                map.name,
                map.fields.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        ),
        PlaceError::BeyondLeg { .. } => fault(format!("{path}.at_m"), e.to_string()),
        PlaceError::BadFraction(_) => fault(format!("{path}.at_fraction"), e.to_string()),
        PlaceError::NotFinite => fault(path, e.to_string()),
    })?;
    if let Place::Xy { x, y, .. } = place {
        if !map.in_corridor(Vec2::new(x, y)) {
            return Err(fault(
                path,
                format!("the place ({x}, {y}) lies outside the corridor of the map \"{}\"", map.name),
            ));
        }
    }
    Ok(place)
}

fn success(
    s: &Success,
    in_play: &[String],
    deadline_s: Option<f64>,
    fuel_limit_mj: Option<f64>,
) -> Result<(), Fault> {
    if s.is_empty() {
        return Err(fault(
            "success",
            format!("no checks; give at least one of {}", Success::KEYS.join(", ")),
        ));
    }
    let lists = [("scouted", &s.scouted), ("not_scouted", &s.not_scouted), ("order", &s.order)];
    for (key, list) in lists {
        let Some(list) = list else { continue };
        if list.is_empty() {
            return Err(fault(
                format!("success.{key}"),
                "an empty list checks nothing; list fields or leave the key out",
            ));
        }
        for (i, f) in list.iter().enumerate() {
            let at = format!("success.{key}[{i}]");
            if !in_play.contains(f) {
                return Err(fault(
                    at,
                    format!("field \"{f}\" is not in play; fields in play: {}", in_play.join(", ")),
                ));
            }
            if let Some(j) = list[..i].iter().position(|g| g == f) {
                return Err(fault(at, format!("field \"{f}\" is already listed at success.{key}[{j}]")));
            }
        }
    }
    if let Some(not) = &s.not_scouted {
        for (key, list) in [("scouted", &s.scouted), ("order", &s.order)] {
            if let Some((i, f)) =
                not.iter().enumerate().find(|(_, f)| list.as_ref().is_some_and(|l| l.contains(f)))
            {
                return Err(fault(
                    format!("success.not_scouted[{i}]"),
                    format!("field \"{f}\" is also in success.{key}"),
                ));
            }
        }
    }
    if let Some(n) = s.scouted_min {
        let n_play = in_play.len();
        let n_not = s.not_scouted.as_ref().map_or(0, Vec::len);
        if n == 0 {
            return Err(fault("success.scouted_min", "must be at least 1, found 0"));
        }
        if n as usize > n_play {
            return Err(fault(
                "success.scouted_min",
                format!("scouted_min {n} is more than the {n_play} field(s) in play"),
            ));
        }
        if n as usize + n_not > n_play {
            return Err(fault(
                "success.scouted_min",
                format!("scouted_min {n} cannot hold: {n_not} of the {n_play} field(s) in play must not be scouted"),
            ));
        }
    }
    if s.before_deadline == Some(true) && deadline_s.is_none() {
        return Err(fault("success.before_deadline", "needs a deadline, but \"deadline_s\" is not set"));
    }
    if s.within_fuel == Some(true) && fuel_limit_mj.is_none() {
        return Err(fault("success.within_fuel", "needs a fuel limit, but \"fuel_limit_mj\" is not set"));
    }
    if let Some(m) = &s.min_clearance_m {
        if m.is_empty() {
            return Err(fault(
                "success.min_clearance_m",
                "an empty object checks nothing; give object kinds with metres or leave the key out",
            ));
        }
        let kinds = ["truck", "person", "tractor", "car"];
        for (k, v) in m {
            let at = format!("success.min_clearance_m.{k}");
            if !kinds.contains(&k.as_str()) {
                return Err(fault(at, format!("unknown kind \"{k}\"; expected one of {}", kinds.join(", "))));
            }
            if !(v.is_finite() && *v >= 0.0) {
                return Err(fault(at, format!("must be a number of metres >= 0, found {v}")));
            }
        }
    }
    if let Some(v) = s.max_near_person_s {
        if !(v.is_finite() && v >= 0.0) {
            return Err(fault(
                "success.max_near_person_s",
                format!("must be a number of seconds >= 0, found {v}"),
            ));
        }
    }
    Ok(())
}

/// The `sensing` keys: finite, 0 or more; `dropout` below 1.
fn sensing(s: &Sensing) -> Result<(), Fault> {
    s.check().map_err(|(key, problem)| fault(format!("sensing.{key}"), problem))
}

/// The `skills` entries: relative folder paths (to the scenario file), each once. The folders
/// themselves (skill.toml, policy.onnx) are read by the vehicle library when a world is built.
fn skill_folders(skills: &[String]) -> Result<(), Fault> {
    for (i, s) in skills.iter().enumerate() {
        let at = format!("skills[{i}]");
        if s.trim().is_empty() {
            return Err(fault(at.as_str(), "must name a skill folder"));
        }
        if std::path::Path::new(s).is_absolute() {
            return Err(fault(at.as_str(), format!("\"{s}\" must be relative to the scenario file")));
        }
        if skills[..i].contains(s) {
            return Err(fault(at.as_str(), format!("\"{s}\" is listed twice")));
        }
    }
    Ok(())
}
