//! A tool call parsed once: [`Call::parse`] checks the arguments against the tool's schema (the
//! checker's message is the error a planner gets), then deserializes them into the tool's
//! argument struct, so [`super::exec`] reads typed fields and never looks a key up.
//!
//! The structs mirror the schemas of [`super::all_tools`] (`deny_unknown_fields`, the same
//! optional keys); a call that passes the schema always deserializes (tested for every tool).

use serde::Deserialize;
use serde_json::Value;

use acres_vehicle::{SkillKind, SkillRequest};

use super::check_arguments;
use super::picture::Around;
use crate::runfolder::rows::ToolDef;

/// A tool call with its arguments, checked and typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// `look`: a map picture.
    Look(LookArgs),
    /// `read`: numbers and short texts.
    Read(ReadArgs),
    /// `plan`: check a plan.
    Plan(PlanArgs),
    /// `dispatch`: ask the skill server for a skill.
    Dispatch(DispatchArgs),
    /// `note`: keep a note.
    Note(NoteArgs),
    /// `ask_operator`: ask the operator.
    AskOperator(AskOperatorArgs),
    /// A learned skill's tool: ask the skill server for it.
    Learned(LearnedArgs),
}

/// The call of a learned skill's tool: its name and its arguments (a subset of the skill
/// arguments, as its schema allows).
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedArgs {
    /// The skill's (tool) name.
    pub name: String,
    /// Its arguments.
    pub arguments: SkillArgs,
}

impl LearnedArgs {
    /// The skill server's request of this call.
    pub fn request(&self) -> SkillRequest {
        let a = &self.arguments;
        SkillRequest {
            skill: Some(SkillKind::Learned),
            place: a.place.clone(),
            field: a.field.clone(),
            seconds: a.seconds,
            speed_cap_mps: a.speed_cap_mps,
            name: Some(self.name.clone()),
        }
    }
}

/// The view `look` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LookView {
    /// The whole farm.
    Map,
    /// A region.
    Zoom,
    /// Two earlier frames side by side.
    Compare,
}

/// The `region` of `look`, as given (the checker decides which form it is).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionArg {
    /// A field's bounding box.
    pub field: Option<String>,
    /// A circle around the vehicle, home or the site.
    pub around: Option<Around>,
    /// A circle's centre, east, m.
    pub x: Option<f64>,
    /// A circle's centre, north, m.
    pub y: Option<f64>,
    /// The circle's radius, m.
    pub radius_m: Option<f64>,
}

/// The arguments of `look`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookArgs {
    /// The view.
    pub view: LookView,
    /// The region of a zoom (or of a new picture with `frame`).
    pub region: Option<RegionArg>,
    /// An earlier frame (`f0003`): shown again, or the first of a comparison.
    pub frame: Option<String>,
    /// The second frame of a comparison.
    pub other_frame: Option<String>,
    /// The `region` object exactly as the planner wrote it: the frame row records it.
    #[serde(skip)]
    pub region_given: Option<Value>,
}

/// What `read` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadWhat {
    /// Pose, speed, skill, shield.
    Vehicle,
    /// Instruction, fields, scouted, plan, interrupted skill, returns, requests.
    Mission,
    /// Each field with its coverage and planned cost from here.
    Fields,
    /// Time, deadline, energy, counts left.
    Budget,
    /// The skill server's recent events.
    Events,
    /// The planner's notes.
    Notes,
    /// The LiDAR scan, the shield rules, the blocked places.
    Scan,
    /// The simulator's object list (simulator profile only: truth).
    Objects,
}

/// The arguments of `read`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// What to read.
    pub what: ReadWhat,
}

/// The arguments of `plan`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// The fields in visit order.
    pub visits: Vec<String>,
    /// Whether the plan ends at home (default true).
    pub return_home: Option<bool>,
}

/// The skill arguments of `dispatch`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillArgs {
    /// A place (`H`, a field, a lane node).
    pub place: Option<String>,
    /// A field.
    pub field: Option<String>,
    /// Seconds (wait).
    pub seconds: Option<f64>,
    /// Speed cap, m/s.
    pub speed_cap_mps: Option<f64>,
}

/// The arguments of `dispatch`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DispatchArgs {
    /// The skill.
    pub skill: SkillKind,
    /// Its arguments.
    #[serde(default)]
    pub arguments: SkillArgs,
}

impl DispatchArgs {
    /// The skill server's request of this call.
    pub fn request(&self) -> SkillRequest {
        let a = &self.arguments;
        SkillRequest {
            skill: Some(self.skill),
            place: a.place.clone(),
            field: a.field.clone(),
            seconds: a.seconds,
            speed_cap_mps: a.speed_cap_mps,
            name: None,
        }
    }
}

/// The arguments of `note`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteArgs {
    /// The note.
    pub text: String,
}

/// The arguments of `ask_operator`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskOperatorArgs {
    /// The question.
    pub question: String,
}

impl Call {
    /// Checks `args` against the schema of the tool `name` among `tools`, then types them.
    /// The error is the message the planner gets (the schema checker's, naming the JSON path).
    pub fn parse(tools: &[ToolDef], name: &str, args: &Value) -> Result<Call, String> {
        check_arguments(tools, name, args)?;
        fn typed<T: for<'de> Deserialize<'de>>(name: &str, args: &Value) -> Result<T, String> {
            T::deserialize(args).map_err(|e| format!("arguments of {name}: {e}"))
        }
        Ok(match name {
            "look" => {
                let mut a: LookArgs = typed(name, args)?;
                a.region_given = args.get("region").cloned();
                Call::Look(a)
            }
            "read" => Call::Read(typed(name, args)?),
            "plan" => Call::Plan(typed(name, args)?),
            "dispatch" => Call::Dispatch(typed(name, args)?),
            "note" => Call::Note(typed(name, args)?),
            "ask_operator" => Call::AskOperator(typed(name, args)?),
            // Any other tool of the list is a learned skill's (its schema passed above).
            _ => Call::Learned(LearnedArgs { name: name.to_string(), arguments: typed(name, args)? }),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::runfolder::rows::{Mode, Profile};
    use crate::tools::tools_for;

    #[test]
    fn every_call_that_passes_its_schema_is_typed() {
        let tools = tools_for(Mode::Checked, Profile::Simulator, true);
        let calls = [
            ("look", json!({"view": "map"})),
            ("look", json!({"view": "zoom", "region": {"field": "F53"}})),
            ("look", json!({"view": "zoom", "region": {"around": "site", "radius_m": 40}})),
            ("look", json!({"view": "zoom", "region": {"x": 1.5, "y": -2, "radius_m": 30}})),
            ("look", json!({"view": "compare", "frame": "f0001", "other_frame": "f0002"})),
            ("read", json!({"what": "objects"})),
            ("plan", json!({"visits": ["F53", "F55"], "return_home": false})),
            ("dispatch", json!({"skill": "goto", "arguments": {"field": "F53", "speed_cap_mps": 2}})),
            ("dispatch", json!({"skill": "wait", "arguments": {"seconds": 30}})),
            ("dispatch", json!({"skill": "stop"})),
            ("note", json!({"text": "truck at F55"})),
            ("ask_operator", json!({"question": "Go on?"})),
        ];
        for (name, args) in calls {
            let call = Call::parse(&tools, name, &args).unwrap_or_else(|e| panic!("{name} {args}: {e}"));
            match (name, &call) {
                ("look", Call::Look(a)) => assert_eq!(a.region_given, args.get("region").cloned()),
                ("read", Call::Read(a)) => assert_eq!(a.what, ReadWhat::Objects),
                ("plan", Call::Plan(a)) => assert_eq!((a.visits.len(), a.return_home), (2, Some(false))),
                ("dispatch", Call::Dispatch(a)) => assert_eq!(a.request().skill, Some(a.skill)),
                ("note", Call::Note(a)) => assert_eq!(a.text, "truck at F55"),
                ("ask_operator", Call::AskOperator(a)) => assert_eq!(a.question, "Go on?"),
                _ => panic!("{name} parsed as {call:?}"),
            }
        }
    }

    #[test]
    fn a_call_that_fails_its_schema_gets_the_checker_message_and_an_unknown_tool_its_list() {
        let tools = tools_for(Mode::Text, Profile::Vehicle, false);
        let e = Call::parse(&tools, "read", &json!({"what": "objects"})).unwrap_err();
        assert!(e.starts_with("arguments.what"), "{e}");
        let e = Call::parse(&tools, "look", &json!({"view": "map"})).unwrap_err();
        assert_eq!(e, "unknown tool \"look\"; the tools are read, dispatch, note");
        let e =
            Call::parse(&tools, "dispatch", &json!({"skill": "goto", "arguments": {"lane": 3}})).unwrap_err();
        assert!(e.contains("lane"), "{e}");
    }
}
