//! The tool definitions of a mode in the shape each tool-calling API takes (`acres-harness tools
//! --style S`), so an agent framework of its own can offer the planner's tools to its model:
//!
//! | style | shape of one tool |
//! | --- | --- |
//! | `openai` | chat completions: `{"type": "function", "function": {name, description, parameters, strict: true}}` |
//! | `openai-responses` | responses API: `{"type": "function", name, description, parameters, strict: true}` |
//! | `anthropic` | messages API: `{name, description, input_schema}` |
//! | `mcp` | MCP `tools/list`: `{name, description, inputSchema}`, with `wait_for_wake` last |
//!
//! **OpenAI strict mode** has rules of its own, applied by [`strict_schema`]: every object lists
//! all its properties in `required` and has `additionalProperties: false`; a property the tool
//! takes as optional becomes nullable (`"type": ["string", "null"]`, `null` added to an `enum`);
//! the string length keywords (`minLength`, `maxLength`), which strict mode refuses, go (the
//! checker still applies them when the call runs). A `null` from such a model means "not given":
//! the faces drop null-valued keys ([`drop_nulls`]) before a call is checked.
//!
//! The other styles carry the schemas as the model clients send them.

use serde_json::{json, Map, Value};

use crate::runfolder::rows::ToolDef;

/// The API shape of exported tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// OpenAI chat completions, strict function calling.
    Openai,
    /// OpenAI responses API, strict function calling.
    OpenaiResponses,
    /// Anthropic messages API.
    Anthropic,
    /// Model Context Protocol `tools/list` (the MCP face's own list).
    Mcp,
}

/// The name of the MCP face's blocking tool that ends a turn and returns the next wake-up.
pub const WAIT_FOR_WAKE: &str = "wait_for_wake";

/// The definition of `wait_for_wake` (the MCP face and the line protocol add it to a mode's tools).
pub fn wait_for_wake_def() -> ToolDef {
    ToolDef {
        name: WAIT_FOR_WAKE.into(),
        description: "End your turn and wait for the next wake-up (a skill ended, returns on the route, a request, a timer). Returns the wake-up's message and, in the visual and checked modes, a map picture. Call it first to get the start of the mission; when no skill runs and no timer is set, ending the turn ends the run. The time you take between a result and your next call is charged on the mission clock as thinking time.".into(),
        input_schema: json!({"type": "object", "additionalProperties": false, "properties": {}}),
    }
}

/// The tools in the shape of `style` (for `mcp`, `wait_for_wake` is appended).
pub fn export(tools: &[ToolDef], style: Style) -> Value {
    let one = |t: &ToolDef| match style {
        Style::Openai => json!({"type": "function", "function": {
            "name": t.name, "description": t.description,
            "parameters": strict_schema(&t.input_schema), "strict": true}}),
        Style::OpenaiResponses => json!({"type": "function", "name": t.name, "description": t.description,
            "parameters": strict_schema(&t.input_schema), "strict": true}),
        Style::Anthropic => {
            json!({"name": t.name, "description": t.description, "input_schema": t.input_schema})
        }
        Style::Mcp => json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema}),
    };
    let mut out: Vec<Value> = tools.iter().map(one).collect();
    if style == Style::Mcp {
        out.push(one(&wait_for_wake_def()));
    }
    Value::Array(out)
}

/// A schema made valid for OpenAI strict mode (see the module docs).
pub fn strict_schema(schema: &Value) -> Value {
    let Some(obj) = schema.as_object() else { return schema.clone() };
    let mut out = Map::new();
    for (k, v) in obj {
        match k.as_str() {
            "minLength" | "maxLength" => {}
            "properties" | "required" | "additionalProperties" => {}
            "items" => {
                out.insert(k.clone(), strict_schema(v));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if obj.get("type").and_then(Value::as_str) == Some("object") {
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut props = Map::new();
        for (name, sub) in obj.get("properties").and_then(Value::as_object).into_iter().flatten() {
            let s = strict_schema(sub);
            props.insert(name.clone(), if required.contains(&name.as_str()) { s } else { nullable(s) });
        }
        let names: Vec<Value> = props.keys().map(|k| Value::String(k.clone())).collect();
        out.insert("properties".into(), Value::Object(props));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Value::Object(out)
}

/// `schema` that also takes `null`.
fn nullable(mut schema: Value) -> Value {
    if let Some(o) = schema.as_object_mut() {
        if let Some(Value::String(t)) = o.get("type").cloned() {
            o.insert("type".into(), json!([t, "null"]));
        }
        if let Some(Value::Array(options)) = o.get_mut("enum") {
            if !options.contains(&Value::Null) {
                options.push(Value::Null);
            }
        }
    }
    schema
}

/// The arguments with every null-valued key of every object removed (a strict-mode model sends
/// `null` for a key it does not give).
pub fn drop_nulls(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter().filter(|(_, x)| !x.is_null()).map(|(k, x)| (k.clone(), drop_nulls(x))).collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(drop_nulls).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_schemas_require_every_property_and_null_the_optional_ones() {
        let s = json!({"type": "object", "additionalProperties": false, "required": ["view"], "properties": {
            "view": {"type": "string", "enum": ["map", "zoom"]},
            "frame": {"type": "string", "minLength": 5, "maxLength": 5},
            "region": {"type": "object", "properties": {"x": {"type": "number", "minimum": 1}}}}});
        let got = strict_schema(&s);
        assert_eq!(got["required"], json!(["view", "frame", "region"]));
        assert_eq!(got["properties"]["view"], json!({"type": "string", "enum": ["map", "zoom"]}));
        assert_eq!(got["properties"]["frame"], json!({"type": ["string", "null"]}));
        let region = &got["properties"]["region"];
        assert_eq!(region["type"], json!(["object", "null"]));
        assert_eq!(region["additionalProperties"], json!(false));
        assert_eq!(region["properties"]["x"], json!({"type": ["number", "null"], "minimum": 1}));
    }

    #[test]
    fn nulls_are_dropped_at_every_depth() {
        let v = json!({"skill": "goto", "arguments": {"field": "F53", "place": null}, "x": null});
        assert_eq!(drop_nulls(&v), json!({"skill": "goto", "arguments": {"field": "F53"}}));
    }
}
