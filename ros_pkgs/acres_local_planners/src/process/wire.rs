//! The local planner line protocol `acres-local-planner-1`: UTF-8 JSON, one object per line,
//! each with a `"type"`. The harness writes to the plugin's standard input, the plugin answers
//! on its standard output (its standard error is the harness's).
//!
//! ```text
//! harness → plugin  {"type":"hello","protocol":"acres-local-planner-1","budget_ms":200,"max_curvature":0.2361}
//! plugin → harness  {"type":"hello","protocol":"acres-local-planner-1","name":"example"}
//! harness → plugin  {"type":"step","seq":1,"id":1,"t_s":0.05,"pose":{"x":0,"y":0,"yaw":0},"speed_mps":0,
//!                    "s_m":0,"remaining_m":310.2,"limit_mps":3,"ahead_m":null,"route":{...}}
//! plugin → harness  {"type":"command","seq":1,"speed_mps":1.2,"yaw_rate_rps":0.01}
//! harness → plugin  {"type":"end","id":1,"code":"succeeded"}
//! harness → plugin  {"type":"exit"}
//! ```
//!
//! A `step` carries `route` on the first step of each motion (a start or a resume) and never
//! else. The plugin answers every `step` with one `command` (or an `error` with a `message`)
//! with the same `seq` within the step budget. `end` and `exit` get no answer; after `exit` the
//! harness closes the plugin's input. `docs/local-planner-protocol.md` is the full description.

use serde::{Deserialize, Serialize};

/// The protocol version, checked at `hello`.
pub const PROTOCOL: &str = "acres-local-planner-1";

/// The longest line either side may write, bytes.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// A pose on the map: m, m, rad.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseMsg {
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// Heading, rad (0 = east, counter-clockwise).
    pub yaw: f64,
}

/// The speed limits of the ground, m/s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsMsg {
    /// On lanes and in the yard, m/s.
    pub lane_mps: f64,
    /// In fields, m/s.
    pub field_mps: f64,
}

/// The route of a motion that starts or resumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteMsg {
    /// The skill (`goto`, `scout`, `return_home`).
    pub skill: String,
    /// Its target (a place or a field).
    pub target: String,
    /// The route's vertices `[x, y]`, m.
    pub points: Vec<[f64; 2]>,
    /// Where along the route the vehicle starts, m (more than 0 at a resume).
    pub s_m: f64,
    /// The ground's speed limits.
    pub limits: LimitsMsg,
    /// The request's speed cap, m/s.
    pub cap_mps: Option<f64>,
    /// The motion succeeds when the route's end is this near and the vehicle stands, m.
    pub goal_tolerance_m: f64,
}

/// What the harness writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToPlugin {
    /// The first line.
    Hello {
        /// [`PROTOCOL`].
        protocol: String,
        /// The time the plugin has for each `command`, ms.
        budget_ms: u64,
        /// The vehicle's curvature limit, 1/m.
        max_curvature: f64,
    },
    /// One control step of a running motion.
    Step {
        /// The step's number, from 1; the answer repeats it.
        seq: u64,
        /// The skill's identifier.
        id: u64,
        /// Mission time, s.
        t_s: f64,
        /// The vehicle's pose.
        pose: PoseMsg,
        /// The vehicle's speed, m/s.
        speed_mps: f64,
        /// Progress along the route as the skill server tracks it, m.
        s_m: f64,
        /// Metres left to the route's end.
        remaining_m: f64,
        /// The speed limit where the vehicle is (ground and cap), m/s.
        limit_mps: f64,
        /// The obstacle distance ahead, m (`null`: nothing seen).
        ahead_m: Option<f64>,
        /// The route, on the first step of a motion only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        route: Option<RouteMsg>,
    },
    /// The motion `id` ended.
    End {
        /// The skill's identifier.
        id: u64,
        /// Its result code.
        code: String,
    },
    /// The harness is done; the input closes after this line.
    Exit {},
}

/// What the plugin writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromPlugin {
    /// The answer to `hello`.
    Hello {
        /// [`PROTOCOL`].
        protocol: String,
        /// The planner's name (for logs).
        #[serde(default)]
        name: Option<String>,
    },
    /// The answer to a `step`.
    Command {
        /// The step's `seq`.
        seq: u64,
        /// Forward speed, m/s.
        speed_mps: f64,
        /// Yaw rate, rad/s (counter-clockwise).
        yaw_rate_rps: f64,
    },
    /// The plugin cannot plan this step: the motion ends `reactive_fault` with the message.
    Error {
        /// The step's `seq`.
        seq: u64,
        /// Why.
        message: String,
    },
}

/// Encodes one line (without its newline).
pub fn encode(m: &ToPlugin) -> String {
    serde_json::to_string(m).expect("the protocol's messages always serialize")
}

/// Decodes one line of the plugin; the error says what is wrong with it.
pub fn decode(line: &str) -> Result<FromPlugin, String> {
    if line.len() > MAX_LINE_BYTES {
        return Err(format!("a line of {} bytes (at most {MAX_LINE_BYTES})", line.len()));
    }
    serde_json::from_str(line).map_err(|e| format!("{e} in {}", excerpt(line)))
}

/// A line shortened for a cause.
pub fn excerpt(line: &str) -> String {
    let mut s: String = line.chars().take(80).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    format!("{s:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_doc_lines_decode() {
        let h = decode(r#"{"type":"hello","protocol":"acres-local-planner-1","name":"example"}"#).unwrap();
        assert_eq!(h, FromPlugin::Hello { protocol: PROTOCOL.into(), name: Some("example".into()) });
        let c = decode(r#"{"type":"command","seq":1,"speed_mps":1.2,"yaw_rate_rps":0.01}"#).unwrap();
        assert_eq!(c, FromPlugin::Command { seq: 1, speed_mps: 1.2, yaw_rate_rps: 0.01 });
    }

    #[test]
    fn unknown_keys_types_and_junk_are_refused_with_the_line() {
        let e = decode(r#"{"type":"command","seq":1,"speed_mps":1,"yaw_rate_rps":0,"gear":2}"#).unwrap_err();
        assert!(e.contains("gear"), "{e}");
        assert!(decode(r#"{"type":"fly"}"#).unwrap_err().contains("fly"));
        assert!(decode("not json").unwrap_err().contains("\"not json\""));
        assert!(decode(&"x".repeat(MAX_LINE_BYTES + 1)).unwrap_err().contains("bytes"));
    }

    #[test]
    fn a_step_round_trips_and_carries_the_route_only_when_given() {
        let step = ToPlugin::Step {
            seq: 3,
            id: 1,
            t_s: 0.1,
            pose: PoseMsg { x: 1.0, y: -2.5, yaw: 0.3 },
            speed_mps: 1.0,
            s_m: 0.5,
            remaining_m: 99.5,
            limit_mps: 3.0,
            ahead_m: None,
            route: None,
        };
        let line = encode(&step);
        assert!(!line.contains("route"), "{line}");
        assert!(line.contains("\"ahead_m\":null"), "{line}");
        assert_eq!(serde_json::from_str::<ToPlugin>(&line).unwrap(), step);
    }
}
