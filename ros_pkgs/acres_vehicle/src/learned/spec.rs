//! `skill.toml`: what a learned skill is (its name, description, argument schema, bounds, scope,
//! success predicate and observation), read and checked once. docs/learned-skills.md is the format's
//! reference; every fault is a [`LearnedError`] naming the file, the key path and the line.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::observe::ObsField;

/// The arguments a learned skill may take: the skill request's own words, so that a learned
/// skill travels over the link's action (`/acres/skill`) unchanged.
pub const ARGUMENT_WORDS: [&str; 4] = ["field", "place", "seconds", "speed_cap_mps"];

/// The per-tick time budget of a policy when `skill.toml` gives none, ms. Generous: a small
/// policy runs in microseconds, so only a pathological one trips it (runs stay deterministic).
pub const DEFAULT_TICK_BUDGET_MS: f64 = 50.0;

/// A learned skill folder that could not be loaded: one line,
/// `<file>:<line>: at <key path>: <message>` (no line when the fault has none).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: at {key}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct LearnedError {
    /// The file (`skill.toml`, `policy.onnx`, or the folder).
    pub file: PathBuf,
    /// The key path of the fault (`scope.radius_m`; `$` for the whole file).
    pub key: String,
    /// The line, 1-based, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Where a learned skill's reference route comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteKind {
    /// From the vehicle at the field's entry once around the Scout loop of the argument `field`
    /// and back to the entry (the route of `scout`); the pass counts as the field's coverage.
    ScoutLoop,
}

/// The reference route (`[route]`).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    /// Which route.
    pub kind: RouteKind,
    /// The speed cap the policy sees when the call gives no `speed_cap_mps`, m/s.
    pub default_speed_mps: f64,
}

/// Where the vehicle must stay (`[scope]`): a field or a circle around the start.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeSpec {
    /// A field id, or `"$field"`: the call's `field` argument.
    pub field: Option<String>,
    /// A circle around where the skill starts, m.
    pub radius_m: Option<f64>,
    /// How far outside the field's polygon still counts as in it, m (default 0).
    #[serde(default)]
    pub margin_m: f64,
}

/// The success predicate (`[success]`): the skill completes when it holds.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuccessSpec {
    /// The fraction of the route driven, 0..1.
    pub route_fraction: f64,
}

/// `skill.toml`, parsed and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillSpec {
    /// The tool name: lower-case letters, digits and `_`, starting with a letter; not a
    /// built-in tool or skill.
    pub name: String,
    /// What the planner reads about it.
    pub description: String,
    /// The JSON Schema of its arguments (an object over [`ARGUMENT_WORDS`]).
    pub arguments: Value,
    /// The bound of one execution: past it the skill ends `timeout`, s.
    pub max_s: f64,
    /// The policy's wall-time budget per tick: over it the skill ends `reactive_fault`, ms.
    pub tick_budget_ms: f64,
    /// The reference route.
    pub route: RouteSpec,
    /// The scope.
    pub scope: ScopeSpec,
    /// The success predicate.
    pub success: SuccessSpec,
    /// The observation vector the policy reads, named and in order.
    pub observation: Vec<ObsField>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillFile {
    name: String,
    description: String,
    max_s: f64,
    tick_budget_ms: Option<f64>,
    observation: Vec<String>,
    arguments: toml::Table,
    route: RouteSpec,
    scope: ScopeSpec,
    success: SuccessSpec,
}

/// Names a learned skill may not take (the tools and the built-in skills).
const TAKEN: [&str; 13] = [
    "look",
    "read",
    "plan",
    "dispatch",
    "note",
    "ask_operator",
    "goto",
    "scout",
    "return_home",
    "wait",
    "stop",
    "resume",
    "learned",
];

/// Parses and checks the text of `file` (a `skill.toml`).
pub fn parse(text: &str, file: &Path) -> Result<SkillSpec, LearnedError> {
    let fault = |key: &str, message: String| LearnedError {
        file: file.to_path_buf(),
        key: key.into(),
        line: line_of(text, key),
        message,
    };
    let raw: SkillFile = toml::from_str(text).map_err(|e| LearnedError {
        file: file.to_path_buf(),
        key: "$".into(),
        line: e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1)),
        message: e.message().trim().to_string(),
    })?;
    let name_ok = raw.name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && raw.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && raw.name.len() <= 64;
    if !name_ok {
        return Err(fault(
            "name",
            format!(
                "\"{}\" is not a tool name: lower-case letters, digits and _, starting with a letter",
                raw.name
            ),
        ));
    }
    if TAKEN.contains(&raw.name.as_str()) {
        return Err(fault("name", format!("\"{}\" is already a tool or a built-in skill", raw.name)));
    }
    if raw.description.trim().is_empty() {
        return Err(fault("description", "must not be empty".into()));
    }
    if !(raw.max_s.is_finite() && raw.max_s > 0.0) {
        return Err(fault("max_s", format!("must be a positive number of seconds, not {}", raw.max_s)));
    }
    let tick_budget_ms = raw.tick_budget_ms.unwrap_or(DEFAULT_TICK_BUDGET_MS);
    if !(tick_budget_ms.is_finite() && tick_budget_ms > 0.0) {
        return Err(fault("tick_budget_ms", format!("must be a positive number, not {tick_budget_ms}")));
    }
    let arguments = arguments(&raw.arguments).map_err(|(k, m)| fault(&k, m))?;
    if !(raw.route.default_speed_mps.is_finite() && raw.route.default_speed_mps > 0.0) {
        return Err(fault("route.default_speed_mps", "must be a positive speed".into()));
    }
    scope(&raw.scope, &arguments).map_err(|(k, m)| fault(&k, m))?;
    let f = raw.success.route_fraction;
    if !(f > 0.0 && f <= 1.0) {
        return Err(fault("success.route_fraction", format!("must be in (0, 1], not {f}")));
    }
    if raw.observation.is_empty() {
        return Err(fault("observation", "names no observation field".into()));
    }
    let mut observation = Vec::new();
    for (i, w) in raw.observation.iter().enumerate() {
        let Some(o) = ObsField::parse(w) else {
            let words: Vec<&str> = ObsField::ALL.iter().map(|o| o.as_str()).collect();
            return Err(fault(
                "observation",
                format!("observation[{i}]: unknown field \"{w}\"; the fields are {}", words.join(", ")),
            ));
        };
        observation.push(o);
    }
    let needs_field = raw.route.kind == RouteKind::ScoutLoop;
    if needs_field && !required(&arguments).contains(&"field") {
        return Err(fault(
            "arguments.required",
            "the route scout_loop needs the argument \"field\" (required)".into(),
        ));
    }
    Ok(SkillSpec {
        name: raw.name,
        description: raw.description,
        arguments,
        max_s: raw.max_s,
        tick_budget_ms,
        route: raw.route,
        scope: raw.scope,
        success: raw.success,
        observation,
    })
}

/// The argument schema as JSON, checked: an object with `additionalProperties = false` whose
/// properties are among [`ARGUMENT_WORDS`] with their JSON types.
fn arguments(t: &toml::Table) -> Result<Value, (String, String)> {
    let v = serde_json::to_value(t).map_err(|e| ("arguments".to_string(), e.to_string()))?;
    if v.get("type") != Some(&Value::from("object")) {
        return Err(("arguments.type".into(), "must be \"object\"".into()));
    }
    if v.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Err(("arguments.additionalProperties".into(), "must be false".into()));
    }
    let props = v.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    for (k, p) in &props {
        let want = match k.as_str() {
            "field" | "place" => "string",
            "seconds" | "speed_cap_mps" => "number",
            _ => {
                return Err((
                    format!("arguments.properties.{k}"),
                    format!("unknown argument \"{k}\"; a learned skill takes {}", ARGUMENT_WORDS.join(", ")),
                ))
            }
        };
        if p.get("type").and_then(Value::as_str) != Some(want) {
            return Err((format!("arguments.properties.{k}.type"), format!("must be \"{want}\"")));
        }
    }
    for r in required(&v) {
        if !props.contains_key(r) {
            return Err(("arguments.required".into(), format!("\"{r}\" is required but not a property")));
        }
    }
    Ok(v)
}

fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map_or(Vec::new(), |a| a.iter().filter_map(Value::as_str).collect())
}

fn scope(s: &ScopeSpec, arguments: &Value) -> Result<(), (String, String)> {
    match (&s.field, s.radius_m) {
        (Some(_), Some(_)) | (None, None) => {
            Err(("scope".into(), "give exactly one of field (a field id or \"$field\") and radius_m".into()))
        }
        (Some(f), None) if f == "$field" && !required(arguments).contains(&"field") => {
            Err(("scope.field".into(), "\"$field\" needs the argument \"field\" (required)".into()))
        }
        (None, Some(r)) if !(r.is_finite() && r > 0.0) => {
            Err(("scope.radius_m".into(), format!("must be a positive distance, not {r}")))
        }
        _ if !(s.margin_m.is_finite() && s.margin_m >= 0.0) => {
            Err(("scope.margin_m".into(), format!("must be 0 or more, not {}", s.margin_m)))
        }
        _ => Ok(()),
    }
}

/// The line (1-based) of a key path in TOML text: its table header, else the first line that
/// sets its last segment.
pub(crate) fn line_of(text: &str, key: &str) -> Option<usize> {
    let (table, last) = match key.rsplit_once('.') {
        Some((t, l)) => (Some(t), l),
        None => (None, key),
    };
    let header = |t: &str| text.lines().position(|l| l.trim() == format!("[{t}]"));
    if let Some(i) = header(key) {
        return Some(i + 1);
    }
    let from = table.and_then(header).unwrap_or(0);
    text.lines()
        .enumerate()
        .skip(from)
        .find(|(_, l)| {
            let l = l.trim_start();
            l.strip_prefix(last).is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|(i, _)| i + 1)
        .or_else(|| table.and_then(header).map(|i| i + 1))
}
