//! A small JSON Schema checker for the tools' argument schemas: `type` (object, string, number,
//! integer, boolean, array), `enum`, `properties`, `required`, `additionalProperties: false`,
//! `items`, `minimum`, `maximum`, `minItems`, `maxItems`, `minLength`, `maxLength`. Errors name
//! the JSON path of the fault (`arguments.region.radius_m`).

use serde_json::Value;

/// Checks `v` against `schema`; the first fault as `path: problem`.
pub fn check(schema: &Value, v: &Value, path: &str) -> Result<(), String> {
    let fail = |msg: String| Err(format!("{path}: {msg}"));
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => v.is_object(),
            "string" => v.is_string(),
            "number" => v.is_number(),
            "integer" => v.is_i64() || v.is_u64(),
            "boolean" => v.is_boolean(),
            "array" => v.is_array(),
            _ => true,
        };
        if !ok {
            return fail(format!("expected {} {t}, got {}", article(t), short(v)));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(v) {
            let names: Vec<String> =
                options.iter().map(|o| o.as_str().map_or(o.to_string(), str::to_string)).collect();
            return fail(format!("{} is not one of {}", short(v), names.join(", ")));
        }
    }
    if let Some(n) = v.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
            if n < min {
                return fail(format!("{n} is below the minimum {min}"));
            }
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
            if n > max {
                return fail(format!("{n} is above the maximum {max}"));
            }
        }
    }
    if let Some(s) = v.as_str() {
        let len = s.chars().count() as u64;
        if schema.get("minLength").and_then(Value::as_u64).is_some_and(|m| len < m) {
            return fail("the text is too short".into());
        }
        if let Some(m) = schema.get("maxLength").and_then(Value::as_u64) {
            if len > m {
                return fail(format!("the text is longer than {m} characters"));
            }
        }
    }
    if let Some(items) = v.as_array() {
        check_items(schema, items, path)?;
    }
    if let Some(obj) = v.as_object() {
        check_object(schema, obj, path)?;
    }
    Ok(())
}

/// The item rules of an array: its length and each item.
fn check_items(schema: &Value, items: &[Value], path: &str) -> Result<(), String> {
    let fail = |msg: String| Err(format!("{path}: {msg}"));
    let n = items.len() as u64;
    if schema.get("minItems").and_then(Value::as_u64).is_some_and(|m| n < m) {
        return fail(format!("needs at least {} items", schema["minItems"]));
    }
    if schema.get("maxItems").and_then(Value::as_u64).is_some_and(|m| n > m) {
        return fail(format!("takes at most {} items", schema["maxItems"]));
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &format!("{path}[{i}]"))?;
        }
    }
    Ok(())
}

/// The key rules of an object: required keys, no others when `additionalProperties` is false,
/// each property.
fn check_object(schema: &Value, obj: &serde_json::Map<String, Value>, path: &str) -> Result<(), String> {
    let fail = |msg: String| Err(format!("{path}: {msg}"));
    let props = schema.get("properties").and_then(Value::as_object);
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if !obj.contains_key(r) {
                return fail(format!("missing required key \"{r}\""));
            }
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        for k in obj.keys() {
            if props.is_none_or(|p| !p.contains_key(k)) {
                let allowed: Vec<&str> =
                    props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                return fail(format!("unknown key \"{k}\"; allowed: {}", allowed.join(", ")));
            }
        }
    }
    if let Some(props) = props {
        for (k, sub) in props {
            if let Some(x) = obj.get(k) {
                check(sub, x, &format!("{path}.{k}"))?;
            }
        }
    }
    Ok(())
}

fn article(t: &str) -> &'static str {
    if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        format!("{}…", &s[..s.char_indices().nth(40).map_or(s.len(), |(i, _)| i)])
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_path_of_the_fault() {
        let s = json!({"type": "object", "required": ["what"], "additionalProperties": false,
            "properties": {"what": {"type": "string", "enum": ["a", "b"]}, "n": {"type": "number", "minimum": 1},
                           "xs": {"type": "array", "items": {"type": "string"}}}});
        assert!(check(&s, &json!({"what": "a"}), "arguments").is_ok());
        let cases = [
            (json!([]), "arguments: expected an object, got []"),
            (json!({}), "arguments: missing required key \"what\""),
            (json!({"what": "c"}), "arguments.what: \"c\" is not one of a, b"),
            (json!({"what": "a", "z": 1}), "arguments: unknown key \"z\"; allowed: what, n, xs"),
            (json!({"what": "a", "n": 0.5}), "arguments.n: 0.5 is below the minimum 1"),
            (json!({"what": "a", "xs": ["x", 3]}), "arguments.xs[1]: expected a string, got 3"),
        ];
        for (v, want) in cases {
            assert_eq!(check(&s, &v, "arguments").unwrap_err(), want);
        }
    }
}
