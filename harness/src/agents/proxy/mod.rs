//! The metering model proxy (`acres-harness proxy`): a coding agent pointed at it
//! (`ANTHROPIC_BASE_URL=http://127.0.0.1:PORT`, `OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`)
//! reaches its model service through it, and each model call's tokens, cost and latency are
//! written into the agent's run folder (`proxy.jsonl`, [`crate::runfolder::proxy`]), so the run
//! is scored on tokens and USD like a model's.
//!
//! - It listens on 127.0.0.1 only and relays every request to the upstream (method, path,
//!   query, body, headers but the hop-by-hop ones and `accept-encoding`), and the answer back
//!   as it comes: a stream of server-sent events is relayed chunk by chunk while it is metered.
//! - It meters POSTs to `…/chat/completions` and `…/responses` (OpenAI) and `…/messages`
//!   (Anthropic), whole or streamed; other requests (`GET /v1/models`) are relayed unmetered.
//! - The key: with a key (read by the CLI from the environment variable it is told), the
//!   client's own `authorization`/`x-api-key` headers are dropped and the key is sent as
//!   `x-api-key` (Anthropic: a path ending `/messages` or an `anthropic-version` header) or
//!   `authorization: Bearer` (OpenAI); without one, the client's headers go through. No header
//!   is ever written or printed, and the key's value is removed from every error message.
//! - The prices: those of one model file, or of the model file whose `model` is the one the
//!   request names (the model clients' own `[prices]`); none found, the cost is 0 and
//!   `priced_by` null.
//! - The rows: one a call when it has ended. The run replaces its folder when it starts; a row
//!   written before that is written again with the next one (the proxy keeps its rows and
//!   rewrites the whole file when the file is gone).

pub mod meter;

use std::convert::Infallible;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::channel::{Channel, Sender};
use http_body_util::{BodyExt, Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::{json, Value};

use self::meter::{protocol_of, Meter};
use crate::planners::models::config::Resolved;
use crate::planners::models::http::{error_chain, serve_local, LocalServer};
use crate::runfolder::proxy::{ProxyCallRow, PROXY_FILE};

/// Where the prices of a call come from.
#[derive(Debug, Clone)]
pub enum Pricing {
    /// One model file's prices for every call.
    File(Box<Resolved>),
    /// The model file whose `model` is the model the request names.
    ByModel(Vec<Resolved>),
}

impl Pricing {
    fn of(&self, model: Option<&str>) -> Option<&Resolved> {
        match self {
            Pricing::File(r) => Some(r),
            Pricing::ByModel(list) => list.iter().find(|r| Some(r.config.model.as_str()) == model),
        }
    }
}

/// What a proxy is started with. The key is held here only; it is never formatted.
pub struct ProxyOptions {
    /// The upstream's base URL (`https://api.anthropic.com`, `https://api.openai.com/v1`).
    pub upstream: String,
    /// The run folder of the agent's run (`proxy.jsonl` goes in it).
    pub run_dir: PathBuf,
    /// The key sent upstream, or `None` to pass the client's own headers.
    pub key: Option<String>,
    /// The prices.
    pub pricing: Pricing,
    /// The port on 127.0.0.1 (0: a free one).
    pub port: u16,
    /// The longest a call may take, answer included, s.
    pub timeout_s: f64,
}

/// A running proxy.
pub type Proxy = LocalServer;

struct Shared {
    opts: ProxyOptions,
    client: reqwest::Client,
    calls: AtomicU64,
    rows: Mutex<Vec<String>>,
    /// The port bound (set once the server listens): the allowed `Host` and `Origin`.
    port: std::sync::OnceLock<u16>,
}

/// Starts a proxy on the process's HTTP runtime.
pub fn start(opts: ProxyOptions) -> std::io::Result<Proxy> {
    let client = reqwest::Client::builder().build().map_err(std::io::Error::other)?;
    let shared = Arc::new(Shared {
        opts,
        client,
        calls: AtomicU64::new(0),
        rows: Mutex::new(Vec::new()),
        port: std::sync::OnceLock::new(),
    });
    let server = serve_local(shared.opts.port, shared.clone(), handle)?;
    let _ = shared.port.set(server.addr.port());
    Ok(server)
}

type Body = Either<Full<Bytes>, Channel<Bytes, std::io::Error>>;

/// The upstream URL of a path: the base joined with it, one `/v1` when both have it.
pub fn upstream_url(base: &str, path_and_query: &str) -> String {
    let base = base.trim_end_matches('/');
    match base.strip_suffix("/v1") {
        Some(origin) if path_and_query.starts_with("/v1/") || path_and_query == "/v1" => {
            format!("{origin}{path_and_query}")
        }
        _ => format!("{base}{path_and_query}"),
    }
}

/// Headers never relayed: hop-by-hop ones, the length (recomputed), the encoding asked (the
/// answers must stay readable to be metered).
const DROPPED: [&str; 8] = [
    "host",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "accept-encoding",
    "upgrade",
    "te",
];

/// The client's key headers, replaced when the proxy has its own key.
const KEY_HEADERS: [&str; 3] = ["authorization", "x-api-key", "api-key"];

/// What is known of a call before its answer.
struct CallInfo {
    call: u64,
    wall: f64,
    protocol: &'static str,
    path: String,
    model: Option<String>,
    t0: Instant,
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let t0 = Instant::now();
    let wall = crate::clock::wall_now();
    let (parts, body) = req.into_parts();
    let header = |k: hyper::header::HeaderName| parts.headers.get(k).and_then(|v| v.to_str().ok());
    let allowed = match shared.port.get() {
        Some(&port) => crate::local_http::check(
            port,
            parts.method.as_str(),
            header(hyper::header::HOST),
            header(hyper::header::ORIGIN),
        ),
        None => Err("Forbidden: the proxy is not listening yet".into()),
    };
    if let Err(why) = allowed {
        let mut r = Response::new(Either::Left(Full::new(Bytes::from(why + "\n"))));
        *r.status_mut() = hyper::StatusCode::FORBIDDEN;
        return Ok(r);
    }
    let path = parts.uri.path().to_string();
    let path_q = parts.uri.path_and_query().map_or_else(|| path.clone(), |p| p.as_str().to_string());
    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let protocol = if parts.method == hyper::Method::POST { protocol_of(&path) } else { None };
    let anthropic = protocol == Some("anthropic") || parts.headers.contains_key("anthropic-version");
    let info = protocol.map(|protocol| CallInfo {
        call: shared.calls.fetch_add(1, Ordering::SeqCst) + 1,
        wall,
        protocol,
        path: path.clone(),
        model: serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v["model"].as_str().map(String::from)),
        t0,
    });
    let method =
        reqwest::Method::from_bytes(parts.method.as_str().as_bytes()).unwrap_or(reqwest::Method::POST);
    let mut rb = shared
        .client
        .request(method, upstream_url(&shared.opts.upstream, &path_q))
        .timeout(Duration::from_secs_f64(shared.opts.timeout_s.max(0.001)));
    for (k, v) in &parts.headers {
        let name = k.as_str();
        if DROPPED.contains(&name) || (shared.opts.key.is_some() && KEY_HEADERS.contains(&name)) {
            continue;
        }
        rb = rb.header(name, v.as_bytes());
    }
    if let Some(key) = &shared.opts.key {
        rb = if anthropic {
            rb.header("x-api-key", key)
        } else {
            rb.header("authorization", format!("Bearer {key}"))
        };
    }
    match rb.body(body.to_vec()).send().await {
        Ok(resp) => Ok(relay(shared, resp, info)),
        Err(e) => {
            let message = shared.redact(&format!("the upstream did not answer: {}", error_chain(&e)));
            if let Some(info) = info {
                shared.record(&info, false, 502, Meter::new(info.protocol, false), Some(message.clone()));
            }
            Ok(error_reply(anthropic, &message))
        }
    }
}

/// Relays an upstream answer: its status and headers at once, its body chunk by chunk through
/// a channel while a task meters it and records the call at its end.
fn relay(shared: Arc<Shared>, resp: reqwest::Response, info: Option<CallInfo>) -> Response<Body> {
    let status = resp.status().as_u16();
    let stream = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"));
    let mut builder = Response::builder().status(status);
    for (k, v) in resp.headers() {
        if !DROPPED.contains(&k.as_str()) {
            builder = builder.header(k.as_str(), v.as_bytes());
        }
    }
    let (tx, body) = Channel::<Bytes, std::io::Error>::new(32);
    tokio::spawn(pump(shared, resp, tx, info, status, stream));
    builder.body(Either::Right(body)).unwrap_or_else(|_| Response::new(Either::Left(Full::new(Bytes::new()))))
}

async fn pump(
    shared: Arc<Shared>,
    mut resp: reqwest::Response,
    mut tx: Sender<Bytes, std::io::Error>,
    info: Option<CallInfo>,
    status: u16,
    stream: bool,
) {
    let mut meter = Meter::new(info.as_ref().map_or("openai-chat", |i| i.protocol), stream);
    let mut forwarding = true;
    let mut error = None;
    loop {
        match resp.chunk().await {
            Ok(Some(bytes)) => {
                meter.feed(&bytes);
                // A client gone does not stop the metering: the upstream still bills the call.
                if forwarding && tx.send_data(bytes).await.is_err() {
                    forwarding = false;
                }
            }
            Ok(None) => break,
            Err(e) => {
                error = Some(shared.redact(&format!("the answer was cut: {}", error_chain(&e))));
                break;
            }
        }
    }
    if let Some(info) = info {
        shared.record(&info, meter.is_stream(), status, meter, error.clone());
    }
    if let Some(e) = error {
        tx.abort(std::io::Error::other(e));
    }
}

impl Shared {
    fn redact(&self, text: &str) -> String {
        match &self.opts.key {
            Some(k) if !k.is_empty() => text.replace(k.as_str(), "[redacted]"),
            _ => text.to_string(),
        }
    }

    /// Writes the row of an ended call (the whole file again when the run has replaced it).
    fn record(&self, info: &CallInfo, stream: bool, status: u16, meter: Meter, error: Option<String>) {
        let usage = meter.finish();
        let priced = self.opts.pricing.of(info.model.as_deref());
        let row = ProxyCallRow {
            call: info.call,
            wall: info.wall,
            protocol: info.protocol.to_string(),
            path: info.path.clone(),
            model: info.model.clone(),
            stream,
            status,
            latency_s: info.t0.elapsed().as_secs_f64(),
            usage,
            usd: priced.map_or(0.0, |r| r.config.usd(&usage)),
            priced_by: priced.map(|r| r.name.clone()),
            error,
        };
        let line = self.redact(&row.encode());
        let Ok(mut rows) = self.rows.lock() else { return };
        rows.push(line);
        if let Err(e) = write_rows(&self.opts.run_dir, &rows) {
            eprintln!(
                "proxy: {}: {}",
                self.opts.run_dir.join(PROXY_FILE).display(),
                self.redact(&e.to_string())
            );
        }
    }
}

/// Appends the last row, or writes every row when the file is not there. The rows go where the
/// run writes: its `<dir>.partial` while it goes on (renamed to `<dir>` when it ends, the rows
/// with it); `<dir>` before the run starts; and not into a finished run of an earlier session
/// (`<dir>` holding `run.jsonl` with no partial beside it): those rows wait in memory for the
/// partial folder, so an earlier result is never written into.
fn write_rows(dir: &Path, rows: &[String]) -> std::io::Result<()> {
    let partial = crate::runfolder::writer::partial_path(
        dir.parent().unwrap_or(Path::new(".")),
        &dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
    );
    let dir = if partial.is_dir() {
        partial.as_path()
    } else if dir.join(crate::runfolder::RUN_FILE).is_file() {
        return Ok(());
    } else {
        dir
    };
    let file = dir.join(PROXY_FILE);
    if file.is_file() {
        let mut f = std::fs::OpenOptions::new().append(true).open(&file)?;
        return writeln!(f, "{}", rows.last().map_or("", String::as_str));
    }
    std::fs::create_dir_all(dir)?;
    let mut text = rows.join("\n");
    text.push('\n');
    std::fs::write(&file, text)
}

/// The proxy's own error, in the protocol's shape, status 502.
fn error_reply(anthropic: bool, message: &str) -> Response<Body> {
    let body = if anthropic {
        json!({"type": "error", "error": {"type": "api_error", "message": message}})
    } else {
        json!({"error": {"message": message, "type": "proxy_error", "code": 502}})
    };
    let mut r = Response::new(Either::Left(Full::new(Bytes::from(body.to_string()))));
    *r.status_mut() = StatusCode::BAD_GATEWAY;
    r.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
    r
}

#[cfg(test)]
mod tests {
    use super::upstream_url;

    #[test]
    fn upstream_urls_join_one_v1() {
        assert_eq!(
            upstream_url("https://api.openai.com/v1", "/v1/chat/completions"),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            upstream_url("https://api.openai.com/v1/", "/chat/completions"),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            upstream_url("https://api.anthropic.com", "/v1/messages?beta=true"),
            "https://api.anthropic.com/v1/messages?beta=true"
        );
        assert_eq!(upstream_url("http://127.0.0.1:9/x", "/v1/messages"), "http://127.0.0.1:9/x/v1/messages");
    }
}
