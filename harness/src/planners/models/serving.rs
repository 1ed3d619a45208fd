//! The serving stack of an OpenAI-compatible server as it reports itself, read once at the start
//! of a run (`GET {root}/props` for llama.cpp, `GET {base_url}/models` for every server) and
//! recorded in the run row's `serving`, so that a leaderboard can tell two servings of one model
//! apart (D100). Its window feeds context management when the model file sets no
//! `context_tokens` (D101).
//!
//! Nothing here is sent to the model: two GETs, each bounded by a few seconds; a server that
//! answers neither gives no `serving` object (the run goes on).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::config::{ModelConfig, Provider};
use super::http;

/// The run row's `serving`: what the server said of itself. Every field is optional: a server
/// says what it says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Serving {
    /// The server's name: `llama.cpp` when `/props` answers as llama.cpp does, else the served
    /// model's `owned_by` in `/models` (`vllm`, `llamacpp`, `ollama`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The server's build as it reports it (llama.cpp `/props` `build_info`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The model ids `/models` lists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
    /// The model id the model file asks for.
    pub model: String,
    /// The served model's `meta` in `/models` (llama.cpp: vocabulary, parameters, size, type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// SHA-256 of the chat template, hex, where the server exposes it (llama.cpp `/props`
    /// `chat_template`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template_sha256: Option<String>,
    /// What the template and the model can take, as the server says (llama.cpp `/props`
    /// `chat_template_caps` and `modalities`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caps: Option<Map<String, Value>>,
    /// The context window the server reports, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// Where the window was read (`/props n_ctx`, `/models max_model_len`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_source: Option<String>,
    /// The conformance probe's verdict of each check, when the run was started with `--probe`
    /// (`{"tools": "pass", "pictures": "warn", ...}`; see `conform`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<std::collections::BTreeMap<String, super::conform::Verdict>>,
}

/// Seconds each GET may take.
const GET_S: f64 = 5.0;

/// The serving stack of a model file's server; `None` for a provider other than `openai` or a
/// server that answers neither GET.
pub fn read(cfg: &ModelConfig) -> Option<Serving> {
    if cfg.provider != Provider::OpenAi {
        return None;
    }
    let mut headers = Vec::new();
    if let Ok(Some(k)) = cfg.api_key() {
        headers.push(("authorization".to_string(), format!("Bearer {k}")));
    }
    let get = |url: &str| -> Option<Value> {
        let a = http::send(reqwest::Method::GET, url, &headers, None, GET_S.min(cfg.timeout_s)).ok()?;
        serde_json::from_slice(&a.body).ok()
    };
    let base = cfg.base_url();
    let root = base.trim_end_matches('/').trim_end_matches("/v1");
    let props = get(&format!("{root}/props")).filter(|p| p.get("build_info").is_some());
    let models = get(&format!("{}/models", base.trim_end_matches('/')));
    of(&cfg.model, props.as_ref(), models.as_ref())
}

/// The serving stack from the two answers (`/props`, `/models`).
pub fn of(model: &str, props: Option<&Value>, models: Option<&Value>) -> Option<Serving> {
    if props.is_none() && models.is_none() {
        return None;
    }
    let mut s = Serving { model: model.into(), ..Serving::default() };
    let data = models.and_then(|m| m["data"].as_array()).cloned().unwrap_or_default();
    s.models = data.iter().filter_map(|m| m["id"].as_str().map(String::from)).collect();
    let served = data.iter().find(|m| m["id"] == json!(model)).or(data.first());
    if let Some(m) = served {
        s.server = m["owned_by"].as_str().map(String::from);
        s.meta = m["meta"].as_object().cloned();
        if let Some(n) = m["max_model_len"].as_u64() {
            (s.window, s.window_source) = (Some(n), Some("/models max_model_len".into()));
        } else if let Some(n) = m["meta"]["n_ctx"].as_u64() {
            (s.window, s.window_source) = (Some(n), Some("/models meta.n_ctx".into()));
        }
    }
    if let Some(p) = props {
        s.server = Some("llama.cpp".into());
        s.build = p["build_info"].as_str().map(String::from);
        s.chat_template_sha256 = p["chat_template"].as_str().map(|t| super::cache::sha256_hex(t.as_bytes()));
        let mut caps = p["chat_template_caps"].as_object().cloned().unwrap_or_default();
        if let Some(m) = p["modalities"].as_object() {
            caps.insert("modalities".into(), Value::Object(m.clone()));
        }
        s.caps = (!caps.is_empty()).then_some(caps);
        let n = p["default_generation_settings"]["n_ctx"].as_u64().or_else(|| p["n_ctx"].as_u64());
        if let Some(n) = n {
            (s.window, s.window_source) = (Some(n), Some("/props n_ctx".into()));
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_cpp_answers_give_the_build_the_template_hash_and_the_window() {
        let props = json!({"build_info": "b1-0c1e570", "chat_template": "{{ messages }}",
            "chat_template_caps": {"supports_tools": false}, "modalities": {"vision": false},
            "default_generation_settings": {"n_ctx": 2048}});
        let models = json!({"data": [{"id": "m.gguf", "owned_by": "llamacpp", "created": 5,
            "meta": {"n_ctx": 2048, "n_params": 134515008}}]});
        let s = of("smollm2", Some(&props), Some(&models)).unwrap();
        assert_eq!(s.server.as_deref(), Some("llama.cpp"));
        assert_eq!(s.build.as_deref(), Some("b1-0c1e570"));
        assert_eq!(s.models, vec!["m.gguf".to_string()]);
        assert_eq!(s.model, "smollm2");
        assert_eq!(s.meta.unwrap()["n_params"], 134515008);
        assert_eq!(s.chat_template_sha256.unwrap(), super::super::cache::sha256_hex(b"{{ messages }}"));
        assert_eq!(s.caps.unwrap()["modalities"]["vision"], false);
        assert_eq!((s.window, s.window_source.as_deref()), (Some(2048), Some("/props n_ctx")));
    }

    #[test]
    fn a_vllm_listing_gives_its_owner_and_window_and_nothing_answering_gives_none() {
        let models =
            json!({"data": [{"id": "other"}, {"id": "q", "owned_by": "vllm", "max_model_len": 8192}]});
        let s = of("q", None, Some(&models)).unwrap();
        assert_eq!(s.server.as_deref(), Some("vllm"));
        assert_eq!(s.build, None);
        assert_eq!(s.window, Some(8192));
        assert_eq!(s.models.len(), 2);
        let row = serde_json::to_value(&s).unwrap();
        assert!(row.get("chat_template_sha256").is_none(), "absent, not null: {row}");
        assert_eq!(of("q", None, None), None);
    }
}
