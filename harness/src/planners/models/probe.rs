//! `models --config NAME`: asks the configuration's server for its models (`GET /models` of an
//! OpenAI-style base URL, `GET /v1/models` of Anthropic's) and sends two small test requests
//! through the real client — one plain, one with a tool it must call — reporting each clearly.

use serde_json::json;

use super::config::{Provider, Resolved};
use super::http;
use crate::planners::interface::ToolDef;
use crate::planners::{Block, CallCtx, CallEvent};

/// One check of the probe.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// What was checked.
    pub what: String,
    /// It worked.
    pub ok: bool,
    /// What came back, or why it failed.
    pub detail: String,
}

/// The three checks of a configuration.
pub fn probe(r: &Resolved) -> Vec<Check> {
    let cfg = &r.config;
    if cfg.provider == Provider::Scripted {
        return vec![Check {
            what: "provider scripted".into(),
            ok: true,
            detail: "no server: the stand-in planner runs in the process".into(),
        }];
    }
    let mut out = vec![list_models(r)];
    let client = match super::client(r, &super::ClientOptions::default()) {
        Ok(c) => c,
        Err(e) => {
            out.push(Check { what: "client".into(), ok: false, detail: e });
            return out;
        }
    };
    let tool = ToolDef {
        name: "echo".into(),
        description: "Repeats a word.".into(),
        input_schema: json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"], "additionalProperties": false}),
    };
    let limit_s = cfg.call_timeout_s.unwrap_or(30.0);
    let tests: [(&str, &[ToolDef], &str); 2] = [
        ("plain request", &[], "Answer with the single word: ready"),
        ("request with a tool", std::slice::from_ref(&tool), "Call the tool echo with the word \"field\"."),
    ];
    for (what, tools, prompt) in tests {
        let check = match client.start("You are a connectivity test. Be brief.", tools) {
            Err(e) => Check { what: what.into(), ok: false, detail: e.message },
            Ok(mut s) => {
                let mut tries = Vec::new();
                let mut report = |e: CallEvent| tries.push(format!("{e:?}"));
                let r = s.send(&[Block::Text(prompt.into())], &mut CallCtx { limit_s, report: &mut report });
                match r {
                    Err(e) => Check { what: what.into(), ok: false, detail: e.message },
                    Ok(reply) if !tools.is_empty() => {
                        let called = reply.tool_calls.iter().find(|c| c.name == "echo");
                        Check {
                            what: what.into(),
                            ok: called.is_some(),
                            detail: match called {
                                Some(c) => {
                                    format!("tool call echo {} in {:.2} s", c.arguments, reply.latency_s)
                                }
                                None => format!(
                                    "no call of the tool (stop {:?}, text {:?})",
                                    reply.stop, reply.text
                                ),
                            },
                        }
                    }
                    Ok(reply) => Check {
                        what: what.into(),
                        ok: !reply.text.trim().is_empty(),
                        detail: format!(
                            "{:?} in {:.2} s, {} tokens out",
                            reply.text, reply.latency_s, reply.usage.output_tokens
                        ),
                    },
                }
            }
        };
        out.push(check);
    }
    out
}

fn list_models(r: &Resolved) -> Check {
    let cfg = &r.config;
    let (url, mut headers) = match cfg.provider.as_str() {
        "anthropic" => (
            format!("{}/v1/models", cfg.base_url()),
            vec![("anthropic-version".to_string(), super::anthropic::API_VERSION.to_string())],
        ),
        _ => (format!("{}/models", cfg.base_url()), Vec::new()),
    };
    match cfg.api_key() {
        Ok(Some(k)) if cfg.provider == Provider::Anthropic => headers.push(("x-api-key".into(), k)),
        Ok(Some(k)) => headers.push(("authorization".into(), format!("Bearer {k}"))),
        Ok(None) => {}
        Err(e) => return Check { what: "models".into(), ok: false, detail: e },
    }
    match http::send(reqwest::Method::GET, &url, &headers, None, cfg.timeout_s.min(30.0)) {
        Ok(a) => {
            let v: serde_json::Value = serde_json::from_slice(&a.body).unwrap_or_default();
            let ids: Vec<String> = v["data"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["id"].as_str().map(String::from))
                .collect();
            let listed = ids.contains(&cfg.model);
            Check {
                what: format!("GET {url}"),
                ok: true,
                detail: format!(
                    "{} models: {}{}",
                    ids.len(),
                    ids.join(", "),
                    if listed {
                        String::new()
                    } else {
                        format!(" (the file's model \"{}\" is not among them)", cfg.model)
                    }
                ),
            }
        }
        Err(f) => Check { what: format!("GET {url}"), ok: false, detail: f.message() },
    }
}
