//! The one rule of the harness's local HTTP faces against DNS rebinding: the viewer, the
//! metering proxy and the MCP face over HTTP bind 127.0.0.1, but a web page the user visits can
//! still reach them under a name of its own. So a request is served only when its `Host` is the
//! address the face bound (`127.0.0.1:PORT`, `localhost:PORT` or `[::1]:PORT`), and a request
//! that is not a GET (or HEAD) with an `Origin` only when that origin is one of the same three
//! over `http`; otherwise 403. The viewer and the proxy call [`check`]; the MCP face gives
//! [`allowed_hosts`] and [`allowed_origins`] to its HTTP server's own check (rmcp's).

/// The `Host` values allowed for a face on `port`.
pub fn allowed_hosts(port: u16) -> Vec<String> {
    vec![format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")]
}

/// The `Origin` values allowed for a face on `port`.
pub fn allowed_origins(port: u16) -> Vec<String> {
    allowed_hosts(port).into_iter().map(|h| format!("http://{h}")).collect()
}

/// Whether a request to the face on `port` may be served: `Ok`, or the 403's text.
pub fn check(port: u16, method: &str, host: Option<&str>, origin: Option<&str>) -> Result<(), String> {
    let Some(host) = host else {
        return Err("Forbidden: a Host header is required".into());
    };
    if !allowed_hosts(port).iter().any(|h| h.eq_ignore_ascii_case(host.trim())) {
        return Err("Forbidden: Host header is not allowed".into());
    }
    let safe = method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD");
    if let (false, Some(origin)) = (safe, origin) {
        if !allowed_origins(port).iter().any(|o| o.eq_ignore_ascii_case(origin.trim())) {
            return Err("Forbidden: Origin header is not allowed".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bound_address_is_a_host_and_origins_are_checked_beyond_get() {
        for h in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080"] {
            assert_eq!(check(8080, "GET", Some(h), None), Ok(()), "{h}");
        }
        for h in ["attacker.example", "attacker.example:8080", "127.0.0.1:8081", "localhost", "127.0.0.1"] {
            assert_eq!(
                check(8080, "GET", Some(h), None),
                Err("Forbidden: Host header is not allowed".into()),
                "{h}"
            );
        }
        assert!(check(8080, "GET", None, None).is_err());
        let h = Some("127.0.0.1:8080");
        assert_eq!(
            check(8080, "GET", h, Some("http://attacker.example")),
            Ok(()),
            "a GET's origin is not checked"
        );
        assert_eq!(check(8080, "POST", h, None), Ok(()), "no origin: not a browser");
        assert_eq!(check(8080, "POST", h, Some("http://localhost:8080")), Ok(()));
        for o in ["http://attacker.example", "null", "https://localhost:8080", "http://localhost:9999"] {
            assert_eq!(
                check(8080, "POST", h, Some(o)),
                Err("Forbidden: Origin header is not allowed".into()),
                "{o}"
            );
        }
    }
}
