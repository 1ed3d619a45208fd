//! The HTTP side of the model clients: one process-wide tokio runtime and one `reqwest` client
//! (one connection pool for every run of the process), a blocking `post`/`get` for the
//! synchronous planner loop, and the failures of one try, typed so that the retry policy can
//! tell which are tried again.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What one try gave when it gave no usable answer.
#[derive(Debug, Clone, PartialEq)]
pub enum TryFailure {
    /// The server answered with an error status.
    Status {
        /// The HTTP status.
        status: u16,
        /// The `Retry-After` header, s.
        retry_after_s: Option<f64>,
        /// The start of the body (for the message).
        body: String,
    },
    /// No answer before the try's timeout.
    Timeout,
    /// No connection, or the connection was lost.
    Connection(String),
}

impl TryFailure {
    /// The cause word of a `model_retry` row.
    pub fn cause(&self) -> String {
        match self {
            TryFailure::Status { status: 429, .. } => "429".into(),
            TryFailure::Status { status, .. } => format!("status {status}"),
            TryFailure::Timeout => "timeout".into(),
            TryFailure::Connection(_) => "connection".into(),
        }
    }
    /// Tried again: 429, 408, 500 and above, a timeout, a lost connection.
    pub fn retryable(&self) -> bool {
        match self {
            TryFailure::Status { status, .. } => *status == 429 || *status == 408 || *status >= 500,
            TryFailure::Timeout | TryFailure::Connection(_) => true,
        }
    }
    /// One line for a `model_error` row.
    pub fn message(&self) -> String {
        match self {
            TryFailure::Status { status, body, .. } => format!("status {status}: {body}"),
            TryFailure::Timeout => "no reply before the timeout".into(),
            TryFailure::Connection(e) => format!("connection: {e}"),
        }
    }
}

/// A successful answer (2xx).
#[derive(Debug, Clone)]
pub struct Answer {
    /// The body.
    pub body: Vec<u8>,
    /// How long the try took, s.
    pub latency_s: f64,
}

/// The process's runtime for HTTP (two worker threads: the calls wait, they do not compute).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("acres-http")
            .enable_all()
            .build()
            .expect("the HTTP runtime starts")
    })
}

fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .pool_max_idle_per_host(512)
            .build()
            .expect("the HTTP client builds (rustls with webpki roots)")
    })
}

/// Longest part of an error body kept in messages.
const BODY_SNIPPET: usize = 300;

/// Sends one request and waits for its whole answer, at most `timeout_s`.
pub fn send(
    method: reqwest::Method,
    url: &str,
    headers: &[(String, String)],
    body: Option<Vec<u8>>,
    timeout_s: f64,
) -> Result<Answer, TryFailure> {
    let t0 = Instant::now();
    let mut req = client().request(method, url).timeout(Duration::from_secs_f64(timeout_s.max(0.001)));
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    if let Some(b) = body {
        req = req.header("content-type", "application/json").body(b);
    }
    let result = runtime().block_on(async move {
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok());
        let bytes = resp.bytes().await?;
        Ok::<_, reqwest::Error>((status, retry_after, bytes.to_vec()))
    });
    let latency_s = t0.elapsed().as_secs_f64();
    match result {
        Ok((status, _, body)) if (200..300).contains(&status) => Ok(Answer { body, latency_s }),
        Ok((status, retry_after_s, body)) => {
            let text = String::from_utf8_lossy(&body);
            let body: String = text.chars().take(BODY_SNIPPET).collect();
            Err(TryFailure::Status { status, retry_after_s, body })
        }
        Err(e) if e.is_timeout() => Err(TryFailure::Timeout),
        Err(e) => Err(TryFailure::Connection(error_chain(&e))),
    }
}

/// An error and its sources, joined with ": ".
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

/// A local HTTP/1 server on the process's runtime (the stub model server, the metering proxy):
/// its address, and its accept loop, stopped when it is dropped.
pub struct LocalServer {
    /// The address it listens on (127.0.0.1).
    pub addr: std::net::SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl LocalServer {
    /// The base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `handle` (given `shared` and each request) on 127.0.0.1:`port` (0: a free one), one
/// connection task per client, on the process's runtime.
pub fn serve_local<S, F, Fut, B, E>(
    port: u16,
    shared: std::sync::Arc<S>,
    handle: F,
) -> std::io::Result<LocalServer>
where
    S: Send + Sync + 'static,
    F: Fn(std::sync::Arc<S>, hyper::Request<hyper::body::Incoming>) -> Fut + Copy + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<hyper::Response<B>, E>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let rt = runtime();
    let listener = rt.block_on(tokio::net::TcpListener::bind(("127.0.0.1", port)))?;
    let addr = listener.local_addr()?;
    let task = rt.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            let shared = shared.clone();
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let svc = hyper::service::service_fn(move |req| handle(shared.clone(), req));
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await;
            });
        }
    });
    Ok(LocalServer { addr, task })
}
