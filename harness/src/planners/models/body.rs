//! The request body of the HTTP wires: serialized without copying the history, with the model
//! file's settings (the output limit, the reasoning effort) at their dotted fields.

use serde_json::{json, Value};

use super::config::ModelConfig;

/// A request body borrowing the history: `model`, `system` (when given), `messages`, then the
/// rest (tools, settings) in order.
#[derive(serde::Serialize)]
struct BodyRef<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    messages: &'a [Value],
    #[serde(flatten)]
    rest: serde_json::Map<String, Value>,
}

/// Serializes a request body without copying the history.
pub fn body_bytes(model: &str, system: Option<&str>, messages: &[Value], rest: Value) -> Vec<u8> {
    let rest = match rest {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    serde_json::to_vec(&BodyRef { model, system, messages, rest }).unwrap_or_default()
}

/// Sets a dotted field (`a.b.c`) of a JSON object.
pub fn set_path(body: &mut Value, path: &str, value: Value) {
    let mut cur = body;
    let keys: Vec<&str> = path.split('.').collect();
    for (i, k) in keys.iter().enumerate() {
        if i + 1 == keys.len() {
            cur[*k] = value;
            return;
        }
        if !cur.get(*k).is_some_and(Value::is_object) {
            cur[*k] = json!({});
        }
        cur = &mut cur[*k];
    }
}

/// Adds the effort and the output limit of the model file to a body.
pub fn apply_settings(body: &mut Value, cfg: &ModelConfig, default_max_param: &str) {
    let param = cfg.max_tokens_param.as_deref().unwrap_or(default_max_param);
    body[param] = json!(cfg.max_output_tokens);
    if let Some(t) = cfg.temperature {
        body["temperature"] = json!(t);
    }
    if let (Some(effort), Some(field)) = (&cfg.effort, &cfg.effort_field) {
        let v = cfg
            .effort_map
            .get(effort)
            .and_then(|t| serde_json::to_value(t).ok())
            .unwrap_or_else(|| json!(effort));
        set_path(body, field, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_fields_nest() {
        let mut b = json!({"model": "m"});
        set_path(&mut b, "chat_template_kwargs.enable_thinking", json!(true));
        set_path(&mut b, "reasoning_effort", json!("low"));
        assert_eq!(
            b,
            json!({"model": "m", "chat_template_kwargs": {"enable_thinking": true}, "reasoning_effort": "low"})
        );
    }

    #[test]
    fn effort_and_the_output_limit_follow_the_model_file() {
        let text = "provider = \"openai\"\nmodel = \"m\"\neffort = \"high\"\neffort_field = \"chat_template_kwargs.enable_thinking\"\nmax_tokens_param = \"max_completion_tokens\"\nmax_output_tokens = 77\n[effort_map]\nhigh = true\n";
        let cfg = ModelConfig::parse(text, std::path::Path::new("m.toml")).unwrap();
        let mut b = json!({"model": "m"});
        apply_settings(&mut b, &cfg, "max_tokens");
        assert_eq!(
            b,
            json!({"model": "m", "max_completion_tokens": 77, "chat_template_kwargs": {"enable_thinking": true}})
        );
        // Without a map entry the word itself is sent.
        let text =
            "provider = \"openai\"\nmodel = \"m\"\neffort = \"low\"\neffort_field = \"reasoning_effort\"\n";
        let cfg = ModelConfig::parse(text, std::path::Path::new("m.toml")).unwrap();
        let mut b = json!({});
        apply_settings(&mut b, &cfg, "max_tokens");
        assert_eq!(b, json!({"max_tokens": 4096, "reasoning_effort": "low"}));
    }
}
