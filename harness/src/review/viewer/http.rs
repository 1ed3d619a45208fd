//! A minimal HTTP/1.1 server on `std::net`: GET only, one thread a connection, `Connection:
//! close`, bound to 127.0.0.1 only. It is enough for one person's browser on the same machine,
//! and it adds no dependency to the build.
//!
//! [`safe_path`] is the one gate between a request and the disk: a path is percent-decoded once,
//! then refused (403) when it is absolute, holds a `..` component, a backslash or a NUL, or
//! resolves (symlinks followed) outside the served folder; a path that does not exist is 404.
//! Before that, a request whose `Host` is not the address bound (DNS rebinding) is 403
//! ([`crate::local_http`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The longest request head read, bytes.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// The most connections served at once; more wait in the listener's backlog.
pub const MAX_CONNECTIONS: usize = 32;

/// A parsed request: the decoded path and the query pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The path, percent-decoded (`/files/frames/f0001.png`).
    pub path: String,
    /// The query pairs, percent-decoded.
    pub query: Vec<(String, String)>,
}

impl Request {
    /// The value of a query key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// A response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The content type.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// 200 with a body.
    pub fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Self {
        Response { status: 200, content_type, body: body.into() }
    }
    /// An error status with a plain-text body that says why.
    pub fn error(status: u16, why: impl Into<String>) -> Self {
        let mut body = why.into();
        body.push('\n');
        Response { status, content_type: "text/plain; charset=utf-8", body: body.into_bytes() }
    }
    /// 200 with JSON.
    pub fn json(v: &impl serde::Serialize) -> Self {
        match serde_json::to_vec(v) {
            Ok(b) => Response::ok("application/json", b),
            Err(e) => Response::error(500, format!("cannot encode: {e}")),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Internal Server Error",
    }
}

/// Decodes `%XX` escapes (and `+` as a space in queries); `None` for a bad escape or bytes that
/// are not UTF-8.
pub fn percent_decode(s: &str, plus_is_space: bool) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Parses a request target (`/path?k=v&...`).
pub fn parse_target(target: &str) -> Option<Request> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Some((percent_decode(k, true)?, percent_decode(v, true)?))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Request { path: percent_decode(path, false)?, query })
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Outside the served folder (403).
    Outside(String),
    /// Not there (404).
    Missing(String),
}

impl Refusal {
    /// The response for the refusal.
    pub fn response(&self) -> Response {
        match self {
            Refusal::Outside(w) => Response::error(403, format!("forbidden: {w}")),
            Refusal::Missing(w) => Response::error(404, format!("not found: {w}")),
        }
    }
}

/// The file or folder `rel` (already percent-decoded, relative to `root`) when it lies inside
/// `root` after following symlinks. `root` must be canonical.
pub fn safe_path(root: &Path, rel: &str) -> Result<PathBuf, Refusal> {
    if rel.contains('\\') || rel.contains('\0') {
        return Err(Refusal::Outside(format!("\"{rel}\" holds a backslash or a NUL")));
    }
    let p = Path::new(rel);
    if p.is_absolute() {
        return Err(Refusal::Outside(format!(
            "\"{rel}\" is an absolute path; paths are relative to the served folder"
        )));
    }
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            _ => return Err(Refusal::Outside(format!("\"{rel}\" leaves the served folder (..)"))),
        }
    }
    let joined = root.join(p);
    let real = joined.canonicalize().map_err(|_| Refusal::Missing(rel.to_string()))?;
    if !real.starts_with(root) {
        return Err(Refusal::Outside(format!("\"{rel}\" resolves outside the served folder")));
    }
    Ok(real)
}

/// Serves `handle` on `listener` until the process ends.
pub fn serve<H>(listener: TcpListener, handle: Arc<H>)
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
{
    let live = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        while live.load(std::sync::atomic::Ordering::SeqCst) >= MAX_CONNECTIONS {
            std::thread::sleep(Duration::from_millis(5));
        }
        live.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let (h, l) = (handle.clone(), live.clone());
        std::thread::spawn(move || {
            let _ = connection(stream, &*h);
            l.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        });
    }
}

/// Binds 127.0.0.1:`port` (0: a free port the system chooses).
pub fn bind(port: u16) -> std::io::Result<(TcpListener, SocketAddr)> {
    let l = TcpListener::bind(("127.0.0.1", port))?;
    let a = l.local_addr()?;
    Ok((l, a))
}

fn connection<H: Fn(&Request) -> Response>(stream: TcpStream, handle: &H) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new((&stream).take(MAX_HEAD_BYTES as u64));
    let mut line = String::new();
    reader.read_line(&mut line)?;
    // Read the rest of the head (its Host and Origin); a GET has no body we need.
    let (mut host, mut origin) = (None, None);
    let mut h = String::new();
    while reader.read_line(&mut h)? > 2 {
        if let Some((k, v)) = h.split_once(':') {
            if k.trim().eq_ignore_ascii_case("host") {
                host = Some(v.trim().to_string());
            } else if k.trim().eq_ignore_ascii_case("origin") {
                origin = Some(v.trim().to_string());
            }
        }
        h.clear();
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let port = stream.local_addr()?.port();
    let resp = if let Err(why) = crate::local_http::check(port, method, host.as_deref(), origin.as_deref()) {
        Response::error(403, why)
    } else if method != "GET" && method != "HEAD" {
        Response::error(405, format!("method {method} not allowed: GET only"))
    } else {
        match parse_target(target) {
            Some(req) => handle(&req),
            None => Response::error(400, "bad request target (a bad %-escape?)"),
        }
    };
    let mut w = &stream;
    write!(
        w,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        resp.status,
        reason(resp.status),
        resp.content_type,
        resp.body.len()
    )?;
    if method != "HEAD" {
        w.write_all(&resp.body)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_refuses_escapes_out_of_the_folder() {
        let dir = std::env::temp_dir().join(format!("acres-http-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("a")).unwrap();
        std::fs::write(dir.join("a/x.txt"), "x").unwrap();
        let root = dir.canonicalize().unwrap();
        assert!(safe_path(&root, "a/x.txt").is_ok());
        let r = parse_target("/files/%2e%2e/%2E%2E/etc/passwd").unwrap();
        assert_eq!(r.path, "/files/../../etc/passwd");
        assert!(matches!(safe_path(&root, "../etc/passwd"), Err(Refusal::Outside(_))));
        assert!(matches!(safe_path(&root, "/etc/passwd"), Err(Refusal::Outside(_))));
        assert!(matches!(safe_path(&root, "a/..\\..\\x"), Err(Refusal::Outside(_))));
        assert!(matches!(safe_path(&root, "a/nothing"), Err(Refusal::Missing(_))));
        #[cfg(unix)]
        {
            let _ = std::os::unix::fs::symlink("/etc", dir.join("out"));
            assert!(matches!(safe_path(&root, "out/passwd"), Err(Refusal::Outside(_))));
        }
        assert_eq!(parse_target("/x?run=a%2Fb&i=3").unwrap().get("run"), Some("a/b"));
        assert!(parse_target("/%zz").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    proptest::proptest! {
        #[test]
        fn no_decoded_path_resolves_outside_the_folder(parts in proptest::collection::vec(
            proptest::sample::select(vec!["a", "x.txt", "..", ".", "%2e%2e", "%2E%2e%2F", "%2f", "", "out", "%5c", "..%2F.."]), 0..7)
        ) {
            /// Removes the case's folder when the case ends (also when it fails).
            struct Remove(std::path::PathBuf);
            impl Drop for Remove {
                fn drop(&mut self) {
                    let _ = std::fs::remove_dir_all(&self.0);
                }
            }
            let dir = std::env::temp_dir().join(format!("acres-http-prop-{}", std::process::id()));
            let _remove = Remove(dir.clone());
            std::fs::create_dir_all(dir.join("a")).unwrap();
            std::fs::write(dir.join("a/x.txt"), "x").unwrap();
            #[cfg(unix)]
            let _ = std::os::unix::fs::symlink("/etc", dir.join("a/out"));
            let root = dir.canonicalize().unwrap();
            let target = format!("/files/{}", parts.join("/"));
            if let Some(req) = parse_target(&target) {
                let rel = req.path.strip_prefix("/files/").unwrap_or("");
                if let Ok(p) = safe_path(&root, rel) {
                    proptest::prop_assert!(p.starts_with(&root), "{target} -> {}", p.display());
                }
            }
        }
    }
}
