//! `[capabilities] tools = "constrained"`: a tool protocol for servers and models without native
//! tool calls. Every request asks for one JSON object constrained by a schema — the union of the
//! mode's tool calls (`{"tool": NAME, "arguments": {...}}`, each with the tool's own argument
//! schema) and an end-of-turn text (`{"text": "..."}`) — sent as `response_format`
//! `{type: json_schema}` (llama.cpp, vLLM, Ollama's OpenAI-compatible endpoint, OpenAI), or in
//! llama.cpp's own `json_schema` or Ollama's own `format` field (`constrained_form`). A call
//! read from the reply goes through the same schema check and tool execution as a native call;
//! the history keeps the object as the assistant's text and the result as text.

use serde_json::{json, Value};

use crate::planners::interface::ToolDef;

/// The schema of one reply: one tool call of the mode, or an end-of-turn text.
pub fn turn_schema(tools: &[ToolDef]) -> Value {
    let mut any: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({"type": "object",
                "properties": {"tool": {"const": t.name}, "arguments": t.input_schema},
                "required": ["tool", "arguments"], "additionalProperties": false})
        })
        .collect();
    any.push(json!({"type": "object", "properties": {"text": {"type": "string"}},
        "required": ["text"], "additionalProperties": false}));
    json!({"anyOf": any})
}

/// The system text addition of the constrained protocol.
pub fn constrained_protocol(tools: &[ToolDef]) -> String {
    let list: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.input_schema}))
        .collect();
    format!(
        "\n\nTools: each reply is exactly one JSON object. To call a tool: {{\"tool\": NAME, \"arguments\": {{...}}}}; \
         its result comes back in the next message. To end your turn: {{\"text\": \"a short note\"}}. The tools:\n{}",
        serde_json::to_string(&list).unwrap_or_default()
    )
}

/// What a constrained reply says.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// A call of a known tool: its name and arguments.
    Call(String, Value),
    /// The end of the turn, with its text.
    Text(String),
}

/// Reads a constrained reply (`None` when it is not one of the schema's objects, e.g. cut at
/// the token limit).
pub fn read_turn(text: &str, tools: &[String]) -> Option<Turn> {
    let v: Value = serde_json::from_str(text.trim()).ok()?;
    if let Some(name) = v["tool"].as_str() {
        if tools.iter().any(|t| t == name) {
            return Some(Turn::Call(name.to_string(), v.get("arguments").cloned().unwrap_or(json!({}))));
        }
        return None;
    }
    v["text"].as_str().map(|t| Turn::Text(t.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<ToolDef> {
        vec![ToolDef {
            name: "dispatch".into(),
            description: "Starts a skill.".into(),
            input_schema: json!({"type": "object", "properties": {"skill": {"type": "string"}}, "required": ["skill"]}),
        }]
    }

    #[test]
    fn the_schema_is_the_union_of_the_calls_and_a_text() {
        let s = turn_schema(&tools());
        let any = s["anyOf"].as_array().unwrap();
        assert_eq!(any.len(), 2);
        assert_eq!(any[0]["properties"]["tool"]["const"], "dispatch");
        assert_eq!(any[0]["properties"]["arguments"]["required"], json!(["skill"]));
        assert_eq!(any[1]["required"], json!(["text"]));
    }

    #[test]
    fn replies_read_as_calls_or_text() {
        let names = vec!["dispatch".to_string()];
        assert_eq!(
            read_turn(r#"{"tool": "dispatch", "arguments": {"skill": "scout", "field": "F53"}}"#, &names),
            Some(Turn::Call("dispatch".into(), json!({"skill": "scout", "field": "F53"})))
        );
        assert_eq!(read_turn(r#" {"text": "Done."} "#, &names), Some(Turn::Text("Done.".into())));
        assert_eq!(read_turn(r#"{"tool": "rm", "arguments": {}}"#, &names), None);
        assert_eq!(read_turn(r#"{"tool": "dispatch", "argu"#, &names), None);
    }
}
