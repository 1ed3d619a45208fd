//! The plan checker: is a mission code a mission this run may drive?
//!
//! A mission code is a JSON array of stops, `["H", "F53", "F51", "H"]`: home, each field to visit
//! in order, home. The checker refuses with the first reason that holds, in this order, and gives
//! a counterexample (the stop that shows the fault):
//!
//! | reason | when |
//! | --- | --- |
//! | `malformed` | not an array, or a stop that is not a non-empty string |
//! | `mission_not_well_formed` | fewer than two stops, no field at all, or `H` inside the mission |
//! | `not_home_to_home` | the first or the last stop is not `H` |
//! | `fields_not_each_once` | a field appears twice |
//! | `not_an_option` | a field that is not among the options (the fields in play) |
//! | `removed_entry` | a field whose entry was removed from the mission (dropped earlier) |

use acres_farm::HOME;
use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

/// Why a plan was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Not an array of non-empty strings.
    Malformed,
    /// Structure: too short, no field, or home in the middle.
    MissionNotWellFormed,
    /// Does not start and end at home.
    NotHomeToHome,
    /// A field twice.
    FieldsNotEachOnce,
    /// A field not in play.
    NotAnOption,
    /// A field removed from the mission.
    RemovedEntry,
}

impl Reason {
    /// The reason's name as written in verdicts.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Malformed => "malformed",
            Reason::MissionNotWellFormed => "mission_not_well_formed",
            Reason::NotHomeToHome => "not_home_to_home",
            Reason::FieldsNotEachOnce => "fields_not_each_once",
            Reason::NotAnOption => "not_an_option",
            Reason::RemovedEntry => "removed_entry",
        }
    }
}

/// A refusal with its counterexample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal {
    /// The reason.
    pub reason: Reason,
    /// The index of the stop that shows the fault, when there is one.
    pub stop: Option<usize>,
    /// The field concerned, when there is one.
    pub field: Option<String>,
    /// One sentence a planner can act on.
    pub counterexample: String,
}

/// What the checker knows of the run.
#[derive(Debug, Clone, Default)]
pub struct CheckContext {
    /// The fields in play.
    pub options: BTreeSet<String>,
    /// Fields removed from the mission.
    pub removed: BTreeSet<String>,
}

/// Checks a mission code; `Ok` with the visits in order when it is accepted.
pub fn check(mission: &Value, ctx: &CheckContext) -> Result<Vec<String>, Refusal> {
    let stops = stops_of(mission)?;
    check_home_to_home(&stops)?;
    let visits: Vec<String> = stops[1..stops.len() - 1].to_vec();
    check_visits(&visits, ctx)?;
    Ok(visits)
}

fn refuse(reason: Reason, stop: Option<usize>, field: Option<&str>, text: String) -> Refusal {
    Refusal { reason, stop, field: field.map(str::to_string), counterexample: text }
}

/// The stops of a mission: a list of place names.
fn stops_of(mission: &Value) -> Result<Vec<String>, Refusal> {
    let Some(arr) = mission.as_array() else {
        return Err(refuse(
            Reason::Malformed,
            None,
            None,
            format!("the mission is not a list of stops: {mission}"),
        ));
    };
    let mut stops = Vec::with_capacity(arr.len());
    for (i, v) in arr.iter().enumerate() {
        match v.as_str() {
            Some(s) if !s.trim().is_empty() => stops.push(s.to_string()),
            _ => {
                return Err(refuse(
                    Reason::Malformed,
                    Some(i),
                    None,
                    format!("stop {i} is {v}, not a place name"),
                ))
            }
        }
    }
    Ok(stops)
}

/// At least two stops, H only at the start and at the end, a field visited.
fn check_home_to_home(stops: &[String]) -> Result<(), Refusal> {
    if stops.len() < 2 {
        return Err(refuse(
            Reason::MissionNotWellFormed,
            None,
            None,
            format!("a mission needs at least two stops, this one has {}", stops.len()),
        ));
    }
    let inner = &stops[1..stops.len() - 1];
    if let Some(k) = inner.iter().position(|s| s == HOME) {
        let has_field_after = inner[k + 1..].iter().any(|s| s != HOME);
        let has_field_before = inner[..k].iter().any(|s| s != HOME) || stops[0] != HOME;
        if has_field_after || has_field_before || inner.len() > 1 {
            return Err(refuse(
                Reason::MissionNotWellFormed,
                Some(k + 1),
                None,
                format!("stop {} is H inside the mission; a mission leaves H once, at its start, and comes back once, at its end", k + 1),
            ));
        }
    }
    if stops.iter().all(|s| s == HOME) {
        return Err(refuse(Reason::MissionNotWellFormed, None, None, "the mission visits no field".into()));
    }
    if stops[0] != HOME {
        return Err(refuse(
            Reason::NotHomeToHome,
            Some(0),
            Some(&stops[0]),
            format!("the mission starts at {}, not at H", stops[0]),
        ));
    }
    let last = stops.len() - 1;
    if stops[last] != HOME {
        return Err(refuse(
            Reason::NotHomeToHome,
            Some(last),
            Some(&stops[last]),
            format!("the mission ends at {}, not at H", stops[last]),
        ));
    }
    Ok(())
}

/// Each field once, an option of the mission, not removed.
fn check_visits(visits: &[String], ctx: &CheckContext) -> Result<(), Refusal> {
    for (i, f) in visits.iter().enumerate() {
        if let Some(j) = visits[..i].iter().position(|g| g == f) {
            return Err(refuse(
                Reason::FieldsNotEachOnce,
                Some(i + 1),
                Some(f),
                format!("{f} is visited at stop {} and again at stop {}", j + 1, i + 1),
            ));
        }
    }
    for (i, f) in visits.iter().enumerate() {
        if !ctx.options.contains(f) {
            let opts: Vec<&str> = ctx.options.iter().map(String::as_str).collect();
            return Err(refuse(
                Reason::NotAnOption,
                Some(i + 1),
                Some(f),
                format!(
                    "{f} (stop {}) is not a field of this mission; the options are {}",
                    i + 1,
                    opts.join(", ")
                ),
            ));
        }
    }
    for (i, f) in visits.iter().enumerate() {
        if ctx.removed.contains(f) {
            return Err(refuse(
                Reason::RemovedEntry,
                Some(i + 1),
                Some(f),
                format!("{f} (stop {}) was removed from the mission", i + 1),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> CheckContext {
        CheckContext {
            options: ["F51", "F53", "F55"].iter().map(|s| s.to_string()).collect(),
            removed: ["F55".to_string()].into_iter().collect(),
        }
    }

    #[test]
    fn accepts_a_home_to_home_mission() {
        assert_eq!(check(&json!(["H", "F53", "F51", "H"]), &ctx()).unwrap(), ["F53", "F51"]);
    }

    #[test]
    fn each_reason_has_its_counterexample() {
        let cases = [
            (json!({"visits": 1}), Reason::Malformed, "not a list of stops"),
            (json!(["H", 7, "H"]), Reason::Malformed, "stop 1 is 7"),
            (json!(["H", ""]), Reason::Malformed, "stop 1 is \"\""),
            (json!(["H"]), Reason::MissionNotWellFormed, "at least two stops"),
            (json!(["H", "H"]), Reason::MissionNotWellFormed, "visits no field"),
            (
                json!(["H", "F51", "H", "F53", "H"]),
                Reason::MissionNotWellFormed,
                "stop 2 is H inside the mission",
            ),
            (json!(["H", "H", "F51", "H"]), Reason::MissionNotWellFormed, "stop 1 is H inside the mission"),
            (json!(["F51", "F53", "H"]), Reason::NotHomeToHome, "starts at F51"),
            (json!(["H", "F51", "F53"]), Reason::NotHomeToHome, "ends at F53"),
            (
                json!(["H", "F51", "F53", "F51", "H"]),
                Reason::FieldsNotEachOnce,
                "F51 is visited at stop 1 and again at stop 3",
            ),
            (
                json!(["H", "F51", "F57", "H"]),
                Reason::NotAnOption,
                "F57 (stop 2) is not a field of this mission",
            ),
            (json!(["H", "F55", "H"]), Reason::RemovedEntry, "F55 (stop 1) was removed"),
        ];
        for (mission, reason, text) in cases {
            let r = check(&mission, &ctx()).unwrap_err();
            assert_eq!(r.reason, reason, "{mission}");
            assert!(r.counterexample.contains(text), "{mission}: {}", r.counterexample);
        }
    }
}
