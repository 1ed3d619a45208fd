//! Repairs of small models' replies: a tool call written as text (the fallback protocol), and
//! reasoning written inline in `<think>` tags.
//!
//! The fallback reads the **first complete JSON object** of the text that names a known tool, in
//! the shapes small models emit: inside `<tool_call>…</tool_call>` tags, in a fenced code block,
//! or bare in prose; as `{"name", "arguments"}`, `{"tool", "args"|"arguments"|"parameters"|"input"}`,
//! or `{"function": {"name", "arguments"}}`, with arguments as an object or as a JSON string.
//! The call it gives is then checked against the tool's schema like any native call.

use serde_json::{Map, Value};

/// A tool call read from text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    /// The tool name.
    pub name: String,
    /// The arguments.
    pub arguments: Value,
}

/// Reads the first tool call of `text` that names one of `tools`.
pub fn tool_call_from_text(text: &str, tools: &[&str]) -> Option<TextCall> {
    let mut regions: Vec<&str> = Vec::new();
    if let Some(inner) = between(text, "<tool_call>", "</tool_call>") {
        regions.push(inner);
    }
    if let Some(inner) = fenced(text) {
        regions.push(inner);
    }
    regions.push(text);
    regions.into_iter().find_map(|r| objects(r).into_iter().find_map(|v| as_call(&v, tools)))
}

/// Splits inline reasoning (`<think>…</think>`, as Qwen-style templates write it) from the answer.
pub fn split_think(text: &str) -> (Option<String>, String) {
    let Some(start) = text.find("<think>") else { return (None, text.to_string()) };
    let after = &text[start + "<think>".len()..];
    match after.find("</think>") {
        Some(end) => {
            let reasoning = after[..end].trim().to_string();
            let answer = format!("{}{}", &text[..start], &after[end + "</think>".len()..]).trim().to_string();
            ((!reasoning.is_empty()).then_some(reasoning), answer)
        }
        // A reply cut inside its reasoning: all of it is reasoning, there is no answer.
        None => {
            ((!after.trim().is_empty()).then(|| after.trim().to_string()), text[..start].trim().to_string())
        }
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let s = text.find(open)? + open.len();
    let e = text[s..].find(close).map_or(text.len(), |e| s + e);
    Some(&text[s..e])
}

fn fenced(text: &str) -> Option<&str> {
    let s = text.find("```")? + 3;
    let body_start = text[s..].find('\n').map_or(s, |n| s + n + 1);
    let e = text[body_start..].find("```").map_or(text.len(), |e| body_start + e);
    Some(&text[body_start..e])
}

/// Every complete top-level JSON object in `text`, in order (strings and escapes respected).
fn objects(text: &str) -> Vec<Value> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        match object_end(bytes, i) {
            Some(end) => {
                if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&text[i..end]) {
                    out.push(v);
                    i = end;
                    continue;
                }
                i += 1;
            }
            None => break,
        }
    }
    out
}

fn object_end(bytes: &[u8], start: usize) -> Option<usize> {
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    for (k, &b) in bytes.iter().enumerate().skip(start) {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn as_call(v: &Value, tools: &[&str]) -> Option<TextCall> {
    let o = v.as_object()?;
    if let Some(f) = o.get("function").and_then(Value::as_object) {
        return named(f, tools);
    }
    named(o, tools)
}

fn named(o: &Map<String, Value>, tools: &[&str]) -> Option<TextCall> {
    let name = ["name", "tool", "tool_name"].iter().find_map(|k| o.get(*k).and_then(Value::as_str))?;
    if !tools.contains(&name) {
        return None;
    }
    let raw = ["arguments", "args", "parameters", "input"].iter().find_map(|k| o.get(*k)).cloned();
    let arguments = match raw {
        Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        Some(v) => v,
        None => Value::Object(Map::new()),
    };
    Some(TextCall { name: name.to_string(), arguments })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOOLS: &[&str] = &["read", "dispatch", "plan"];

    fn call(text: &str) -> Option<(String, Value)> {
        tool_call_from_text(text, TOOLS).map(|c| (c.name, c.arguments))
    }

    #[test]
    fn the_shapes_small_models_emit() {
        let want = Some(("read".to_string(), json!({"what": "vehicle"})));
        assert_eq!(call(r#"{"name": "read", "arguments": {"what": "vehicle"}}"#), want);
        assert_eq!(
            call("I will look.\n```json\n{\"name\": \"read\", \"arguments\": {\"what\": \"vehicle\"}}\n```"),
            want
        );
        assert_eq!(
            call("<tool_call>\n{\"name\": \"read\", \"arguments\": {\"what\": \"vehicle\"}}\n</tool_call>"),
            want
        );
        assert_eq!(call(r#"Sure: {"tool": "read", "args": {"what": "vehicle"}} then more"#), want);
        assert_eq!(call(r#"{"function": {"name": "read", "arguments": "{\"what\": \"vehicle\"}"}}"#), want);
        assert_eq!(call(r#"{"type": "function", "name": "read", "parameters": {"what": "vehicle"}}"#), want);
    }

    #[test]
    fn the_first_complete_object_naming_a_tool_wins() {
        let t = r#"Plan {"a": 1} then {"name": "plan", "arguments": {"visits": ["F51"]}} and {"name": "read", "arguments": {}}"#;
        assert_eq!(call(t), Some(("plan".to_string(), json!({"visits": ["F51"]}))));
        // Braces inside strings do not end an object.
        let t = r#"{"name": "dispatch", "arguments": {"skill": "wait", "note": "a } b {"}}"#;
        assert_eq!(call(t).unwrap().1["note"], "a } b {");
    }

    #[test]
    fn no_call_in_prose_or_unknown_tools() {
        assert_eq!(call("I am done for now."), None);
        assert_eq!(call(r#"{"name": "rm", "arguments": {}}"#), None);
        assert_eq!(call(r#"{"name": "read", "arguments": {"what": "#), None);
    }

    #[test]
    fn think_tags_are_reasoning() {
        assert_eq!(
            split_think("<think>the truck</think>Waiting."),
            (Some("the truck".into()), "Waiting.".into())
        );
        assert_eq!(split_think("No tags."), (None, "No tags.".into()));
        assert_eq!(split_think("<think>cut mid-way"), (Some("cut mid-way".into()), String::new()));
    }
}
