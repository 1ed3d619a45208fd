//! The tools of the planner: their definitions (name, description, JSON Schema of the
//! arguments), the tool set of each mode, and their execution ([`exec`]).
//!
//! | tool | modes | arguments |
//! | --- | --- | --- |
//! | `look` | visual, checked | `view` (map, zoom, compare), `region`, `frame`, `other_frame` |
//! | `read` | text, visual, checked | `what` (vehicle, mission, fields, budget, events, notes, scan; objects in the simulator profile) |
//! | `plan` | checked | `visits`, `return_home` |
//! | `dispatch` | text, visual, checked | `skill`, `arguments` (place, field, seconds, speed_cap_mps) |
//! | `note` | text, visual, checked | `text` |
//! | `ask_operator` | with `--operator` | `question` |
//! | each learned skill of the scenario (`edge_pass`, ...) | text, visual, checked | its own schema (skill.toml) |
//!
//! A call is checked against its schema and typed once ([`call::Call::parse`]); each result is one
//! JSON object sent as text; `look` also returns a picture.

pub mod call;
pub mod exec;
pub mod export;
pub mod picture;
pub mod schema;
pub mod state;

use serde_json::{json, Value};

use crate::runfolder::rows::{Mode, Profile, ToolDef};

/// The names `read` takes in every profile.
pub const READ_WHATS: [&str; 7] = ["vehicle", "mission", "fields", "budget", "events", "notes", "scan"];
/// What `read` takes only in the simulator profile (truth of the simulator).
pub const READ_SIMULATOR: &str = "objects";

fn def(name: &str, description: &str, input_schema: Value) -> ToolDef {
    ToolDef { name: name.into(), description: description.into(), input_schema }
}

/// Every tool definition of a profile, in a fixed order.
pub fn all_tools(profile: Profile) -> Vec<ToolDef> {
    let mut whats: Vec<&str> = READ_WHATS.to_vec();
    let mut read_text = "Read numbers and short texts. what: vehicle (pose, speed, skill, shield), mission (instruction, fields, scouted, plan, interrupted skill, returns on the route, requests), fields (each field: entry, loop length, coverage, planned cost from here), budget (time, deadline, energy estimate, fuel limit, counts left), events (the skill server's recent events), notes, scan (360 LiDAR ranges, 45-degree sectors, obstacle distance ahead, shield rules, blocked places)".to_string();
    if profile == Profile::Simulator {
        whats.push(READ_SIMULATOR);
        read_text.push_str(", objects (the simulator's object list: kind, place, size)");
    }
    read_text.push('.');
    vec![
        def(
            "look",
            "Get a map picture (PNG 640x692, north up, metres on the frame). view 'map' shows the whole farm; 'zoom' shows a region: {\"field\": \"F53\"}, {\"around\": \"vehicle\"|\"home\"|\"site\", \"radius_m\": 60} or {\"x\": .., \"y\": .., \"radius_m\": ..}; 'compare' puts two earlier frames side by side (frame, other_frame). Give frame alone with view 'map' or 'zoom' to see an earlier frame again.",
            json!({"type": "object", "additionalProperties": false, "required": ["view"], "properties": {
                "view": {"type": "string", "enum": ["map", "zoom", "compare"]},
                "region": {"type": "object", "additionalProperties": false, "properties": {
                    "field": {"type": "string"},
                    "around": {"type": "string", "enum": ["vehicle", "home", "site"]},
                    "x": {"type": "number"}, "y": {"type": "number"},
                    "radius_m": {"type": "number", "minimum": 5, "maximum": 5000}}},
                "frame": {"type": "string", "minLength": 5, "maxLength": 5},
                "other_frame": {"type": "string", "minLength": 5, "maxLength": 5}}}),
        ),
        def(
            "read",
            &read_text,
            json!({"type": "object", "additionalProperties": false, "required": ["what"], "properties": {
                "what": {"type": "string", "enum": whats}}}),
        ),
        def(
            "plan",
            "Check a plan: the fields in visit order from here, then home. Accepted with the planned time and energy (the cost tables times 1.6 and 1.5), or refused with a reason and a counterexample. goto and scout of a field need an accepted plan whose next visit is that field. An accepted plan replaces the previous one; a field of the previous plan that it leaves out is removed from the mission for good.",
            json!({"type": "object", "additionalProperties": false, "required": ["visits"], "properties": {
                "visits": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
                "return_home": {"type": "boolean"}}}),
        ),
        def(
            "dispatch",
            "Ask the skill server for a skill. goto {field} or {place}: drive the lanes there; scout {field}: from the field's entry once around its Scout loop; return_home; wait {seconds}: stand still (while a skill runs: set a timer that wakes you); stop: end the running skill (it can be resumed); resume: continue the stopped or blocked skill. speed_cap_mps caps the speed. You are woken when the skill ends.",
            json!({"type": "object", "additionalProperties": false, "required": ["skill"], "properties": {
                "skill": {"type": "string", "enum": ["goto", "scout", "return_home", "wait", "stop", "resume"]},
                "arguments": {"type": "object", "additionalProperties": false, "properties": {
                    "place": {"type": "string"}, "field": {"type": "string"},
                    "seconds": {"type": "number", "minimum": 0.1, "maximum": 3600},
                    "speed_cap_mps": {"type": "number", "minimum": 0.1, "maximum": 10}}}}}),
        ),
        def(
            "note",
            "Keep a short note; the notes stay between wake-ups (read notes).",
            json!({"type": "object", "additionalProperties": false, "required": ["text"], "properties": {
                "text": {"type": "string", "minLength": 1, "maxLength": 2000}}}),
        ),
        def(
            "ask_operator",
            "Ask the operator a question. Each use counts as one intervention.",
            json!({"type": "object", "additionalProperties": false, "required": ["question"], "properties": {
                "question": {"type": "string", "minLength": 1, "maxLength": 2000}}}),
        ),
    ]
}

/// The tools of a mode and profile (`operator`: `ask_operator` is on).
pub fn tools_for(mode: Mode, profile: Profile, operator: bool) -> Vec<ToolDef> {
    let names: &[&str] = match mode {
        Mode::Classical => &[],
        Mode::Text => &["read", "dispatch", "note"],
        Mode::Visual => &["look", "read", "dispatch", "note"],
        Mode::Checked => &["look", "read", "plan", "dispatch", "note"],
    };
    let all = all_tools(profile);
    let mut out: Vec<ToolDef> = all.iter().filter(|t| names.contains(&t.name.as_str())).cloned().collect();
    if operator && mode != Mode::Classical {
        out.extend(all.into_iter().filter(|t| t.name == "ask_operator"));
    }
    out
}

/// The tool of each learned skill: its name, its description, its argument schema (the
/// skill's `skill.toml`), after the mode's tools. The skills come from
/// [`acres_vehicle::learned::scenario_skills`].
pub fn learned_tools(skills: &[std::sync::Arc<acres_vehicle::learned::LearnedSkill>]) -> Vec<ToolDef> {
    skills
        .iter()
        .map(|s| {
            let text = format!(
                "{} (a learned skill: ends succeeded, timeout after {} s, region_exit, blocked, reactive_fault or failed; you are woken when it ends.)",
                s.spec.description.trim_end_matches('.'),
                s.spec.max_s
            );
            def(&s.spec.name, &text, s.spec.arguments.clone())
        })
        .collect()
}

/// The tools of a run of `sc`: the mode's ([`tools_for`]) and, but for the classical mode, one
/// per learned skill of the scenario. The skills were checked when the scenario was loaded
/// (a bad folder is an input error before anything runs); one that cannot be loaded now is
/// left out (its requests are then rejected by the skill server).
pub fn scenario_tools(
    mode: Mode,
    profile: Profile,
    operator: bool,
    sc: &crate::scenario::Scenario,
) -> Vec<ToolDef> {
    let mut tools = tools_for(mode, profile, operator);
    if mode != Mode::Classical {
        tools.extend(learned_tools(&acres_vehicle::learned::scenario_skills(sc).unwrap_or_default()));
    }
    tools
}

/// Checks a call's arguments against its tool's schema.
pub fn check_arguments(tools: &[ToolDef], name: &str, args: &Value) -> Result<(), String> {
    let Some(t) = tools.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(format!("unknown tool \"{name}\"; the tools are {}", names.join(", ")));
    };
    schema::check(&t.input_schema, args, "arguments")
}
