//! The stub model server: OpenAI chat completions (plain and streamed), `GET /v1/models`, and
//! Anthropic messages, on 127.0.0.1, answering from a script of turns ([`script`]) and appending
//! every request — its path and its body as received — to a JSONL file. Keys are never
//! recorded (no header is). It is what the tests run the model clients against, and what a user
//! runs to see exactly what the harness sends:
//!
//! ```text
//! acres-harness stub-server --script turns.json --record requests.jsonl [--port 0]
//! ```
//!
//! The first line on stdout is the base URL (`http://127.0.0.1:PORT`); OpenAI-style model
//! files take it with `/v1`, Anthropic ones without.

pub mod conv;
pub mod script;
pub mod wire;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request as HttpRequest, Response, StatusCode};
use serde_json::{json, Value};

use self::conv::{Action, Conversations};
use self::script::Script;

/// A running stub server.
pub type Stub = super::http::LocalServer;

struct Shared {
    convs: Mutex<Conversations>,
    record: Option<Mutex<File>>,
    model: String,
    n: Mutex<u64>,
}

/// Starts a stub server on the process's HTTP runtime (127.0.0.1:`port`, 0 for a free one).
pub fn start(script: Script, record: Option<&Path>, port: u16) -> std::io::Result<Stub> {
    let record = match record {
        Some(p) => Some(Mutex::new(OpenOptions::new().create(true).append(true).open(p)?)),
        None => None,
    };
    let shared = Arc::new(Shared {
        model: script.model().to_string(),
        convs: Mutex::new(Conversations::new(script)),
        record,
        n: Mutex::new(0),
    });
    super::http::serve_local(port, shared, handle)
}

/// Runs the stub server in the foreground until the process is stopped, printing its URL.
pub fn serve(script: &Path, record: Option<PathBuf>, port: u16) -> Result<(), String> {
    let s = Script::load(script)?;
    let stub =
        start(s, record.as_deref(), port).map_err(|e| format!("127.0.0.1:{port}: cannot listen: {e}"))?;
    println!("{}", stub.url());
    let _ = std::io::stdout().flush();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

type Reply = Response<Full<Bytes>>;

fn json_reply(status: StatusCode, v: &Value) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(v.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert("content-type", "application/json".parse().expect("a header value"));
    r
}

/// The error a real server would give, in each protocol's shape.
fn error_reply(anthropic: bool, status: u16, message: &str, retry_after_s: Option<f64>) -> Reply {
    let body = if anthropic {
        json!({"type": "error", "error": {"type": if status == 429 { "rate_limit_error" } else { "api_error" }, "message": message}})
    } else {
        json!({"error": {"message": message, "type": "stub_error", "code": status}})
    };
    let mut r = json_reply(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), &body);
    if let Some(s) = retry_after_s {
        r.headers_mut().insert("retry-after", format!("{s}").parse().expect("a header value"));
    }
    r
}

/// A refusal of pictures as `server` writes it: llama.cpp without a projector (500), vLLM with a
/// text-only model (400), or the stub's own 400.
fn refuse_pictures(anthropic: bool, server: &str, model: &str) -> Reply {
    match server {
        "llama.cpp" => json_reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": {"code": 500, "type": "server_error",
                "message": "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"}}),
        ),
        "vllm" => json_reply(
            StatusCode::BAD_REQUEST,
            &json!({"error": {"object": "error", "type": "BadRequestError", "param": null, "code": 400,
                "message": format!("{model} is not a multimodal model")}}),
        ),
        _ => error_reply(anthropic, 400, "image input is not supported by this model", None),
    }
}

/// The error that makes hyper close the connection without an answer.
#[derive(Debug)]
struct Dropped;
impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the stub drops this connection")
    }
}
impl std::error::Error for Dropped {}

async fn handle(shared: Arc<Shared>, req: HttpRequest<Incoming>) -> Result<Reply, Dropped> {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    let anthropic = req.headers().contains_key("anthropic-version") || path == "/v1/messages";
    let key_sent = req.headers().contains_key("authorization") || req.headers().contains_key("x-api-key");
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    record(&shared, &method, &path, &body, key_sent);
    if method == hyper::Method::GET && (path == "/v1/models" || path == "/models") {
        let data = if anthropic {
            json!({"data": [{"type": "model", "id": shared.model, "display_name": shared.model, "created_at": "2026-01-01T00:00:00Z"}], "has_more": false, "first_id": shared.model, "last_id": shared.model})
        } else {
            json!({"object": "list", "data": [{"id": shared.model, "object": "model", "created": 0, "owned_by": "acres-stub"}]})
        };
        return Ok(json_reply(StatusCode::OK, &data));
    }
    let is_chat = path == "/v1/chat/completions" || path == "/chat/completions";
    if method != hyper::Method::POST || !(is_chat || path == "/v1/messages") {
        return Ok(error_reply(anthropic, 404, &format!("no route {method} {path}"), None));
    }
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return Ok(error_reply(anthropic, 400, "the request body is not JSON", None));
    };
    let request = if is_chat { wire::openai_request(&v) } else { wire::anthropic_request(&v) };
    let action = shared.convs.lock().map_err(|_| Dropped)?.next(request);
    let n = {
        let mut n = shared.n.lock().map_err(|_| Dropped)?;
        *n += 1;
        *n
    };
    match action {
        Action::Status(status, retry_after) => {
            Ok(error_reply(anthropic, status, &format!("stub fault: status {status}"), retry_after))
        }
        Action::Drop => Err(Dropped),
        Action::Malformed => {
            let mut r = Response::new(Full::new(Bytes::from_static(b"{\"choices\": [ this is not json")));
            r.headers_mut().insert("content-type", "application/json".parse().expect("a header value"));
            Ok(r)
        }
        Action::RefusePictures(server) => Ok(refuse_pictures(anthropic, &server, &shared.model)),
        Action::Context(n_prompt, n_ctx) => {
            let body = json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error", "n_prompt_tokens": n_prompt, "n_ctx": n_ctx}});
            Ok(json_reply(StatusCode::BAD_REQUEST, &body))
        }
        Action::Answer(a, delay_s) => {
            if delay_s > 0.0 {
                tokio::time::sleep(Duration::from_secs_f64(delay_s)).await;
            }
            if !is_chat {
                return Ok(json_reply(
                    StatusCode::OK,
                    &wire::anthropic_answer(&a, &shared.model, n, wire::request_len(&v)),
                ));
            }
            if v["stream"] == json!(true) {
                let include_usage = v["stream_options"]["include_usage"] == json!(true);
                let text = wire::openai_stream(&a, &shared.model, n, wire::request_len(&v), include_usage);
                let mut r = Response::new(Full::new(Bytes::from(text)));
                r.headers_mut().insert("content-type", "text/event-stream".parse().expect("a header value"));
                return Ok(r);
            }
            Ok(json_reply(StatusCode::OK, &wire::openai_answer(&a, &shared.model, n, wire::request_len(&v))))
        }
    }
}

/// Appends `{"t", "method", "path", "key_sent", "body"}` to the record file: the arrival time
/// (UNIX seconds), whether a key header came (never its value), and the body as received
/// (parsed JSON, or the text when it is not JSON).
fn record(shared: &Shared, method: &hyper::Method, path: &str, body: &[u8], key_sent: bool) {
    let Some(f) = &shared.record else { return };
    let body_v =
        serde_json::from_slice::<Value>(body).unwrap_or_else(|_| json!(String::from_utf8_lossy(body)));
    let t = crate::clock::wall_now();
    let line = json!({"t": t, "method": method.as_str(), "path": path, "key_sent": key_sent, "body": body_v});
    if let Ok(mut f) = f.lock() {
        let _ = writeln!(f, "{line}");
        let _ = f.flush();
    }
}
