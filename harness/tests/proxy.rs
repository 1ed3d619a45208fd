//! The metering model proxy as real processes over real HTTP: the harness's own model clients
//! play a shipped scenario through it to the stub server on both protocols, and each call's
//! tokens and cost in `proxy.jsonl` equal the model_reply rows' (what the stub reported); a
//! streamed OpenAI answer is relayed whole and metered; an upstream that is down gives a 502
//! and a row; the key reaches the upstream and no file and no output.

mod common;
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use acres_harness::runfolder::proxy::{read_rows, ProxyCallRow};
use acres_harness::runfolder::rows::Row;
use common::stub::*;

const CANARY: &str = "sk-acres-proxy-canary-5be0c13d9a77";

/// A proxy process, killed on drop; its stderr goes to a file.
struct ProxyProc {
    child: Child,
    url: String,
    stderr: PathBuf,
}

impl ProxyProc {
    fn start(dir: &Path, upstream: &str, run: &Path, extra: &[&str]) -> Self {
        let stderr = dir.join(format!("proxy-stderr-{}.txt", std::process::id() ^ rand_tag(run)));
        let mut child = Command::new(bin())
            .args(["proxy", "--upstream", upstream, "--key-env", "ACRES_TEST_PROXY_KEY", "--run"])
            .arg(run)
            .args(extra)
            .env("ACRES_TEST_PROXY_KEY", CANARY)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("the proxy starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url:?}");
        ProxyProc { child, url, stderr }
    }
}

impl Drop for ProxyProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rand_tag(p: &Path) -> u32 {
    p.to_string_lossy().bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
}

/// Every file below `dir` and every given text is free of the canary; returns the files read.
fn assert_no_canary(dir: &Path, texts: &[&str]) -> usize {
    for t in texts {
        assert!(!t.contains(CANARY), "an output holds the key");
    }
    assert_no_file_holds(dir, CANARY)
}

#[test]
fn model_calls_through_the_proxy_are_metered_as_the_stub_reported_on_both_protocols() {
    let dir = tmp("proxy_metered");
    let stub = StubProc::start(&dir, json!({"then": "scripted"}));
    let out = dir.join("runs");
    let mut outputs = Vec::new();
    for (proto, name, protocol) in
        [(Proto::OpenAi, "via_openai", "openai-chat"), (Proto::Anthropic, "via_anthropic", "anthropic")]
    {
        let run_dir = out.join(format!("t1_01_one_field__checked__{name}"));
        // The prices: a model file of the same prices as the run's, named by --model.
        let prices = model_file(&dir, &format!("{name}_prices"), proto, &stub.url, "", "");
        let proxy = ProxyProc::start(&dir, &stub.url, &run_dir, &["--model", prices.to_str().unwrap()]);
        // The client has no key of its own: the stub sees the proxy's.
        let mf = model_file(&dir, name, proto, &proxy.url, "", "");
        let o = harness(&[
            "run",
            "--scenario",
            "scenarios/t1_01_one_field.json",
            "--model",
            mf.to_str().unwrap(),
            "--mode",
            "checked",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        outputs.push(String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr));
        let replies: Vec<_> = rows_of(&run_dir)
            .into_iter()
            .filter_map(|r| if let Row::ModelReply(m) = r { Some(m) } else { None })
            .collect();
        let mut metered = read_rows(&run_dir).expect("proxy.jsonl reads");
        metered.sort_by_key(|r| r.call);
        assert!(replies.len() >= 3, "{name}: {} model calls", replies.len());
        assert_eq!(metered.len(), replies.len(), "{name}: one proxy row per model call");
        for (m, r) in metered.iter().zip(&replies) {
            assert_eq!(m.usage, r.usage, "{name} call {}: the tokens the stub reported", m.call);
            assert!((m.usd - r.usd).abs() < 1e-12, "{name} call {}: {} vs {}", m.call, m.usd, r.usd);
            assert!(m.usd > 0.0 && m.status == 200 && !m.stream && m.error.is_none());
            assert_eq!(m.protocol, protocol);
            assert_eq!(m.model.as_deref(), Some("stub-model"));
            assert_eq!(m.priced_by.as_deref(), Some(format!("{name}_prices").as_str()));
        }
        // validate accepts the folder; score adds the proxy's tokens and USD to the run's own.
        let v = harness(&["validate", run_dir.to_str().unwrap()]);
        assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
        let s = harness(&["score", run_dir.to_str().unwrap(), "--json"]);
        let scores: Value = serde_json::from_slice(&s.stdout).unwrap();
        let end = match rows_of(&run_dir).pop() {
            Some(Row::End(e)) => e,
            other => panic!("{other:?}"),
        };
        let proxy_tokens: u64 = metered.iter().map(|m| m.usage.total()).sum();
        let proxy_usd: f64 = metered.iter().map(|m| m.usd).sum();
        assert_eq!(scores[0]["proxy_calls"], json!(metered.len()));
        assert_eq!(scores[0]["score"]["tokens"], json!(end.score.tokens + proxy_tokens));
        let usd = scores[0]["score"]["usd"].as_f64().unwrap();
        assert!((usd - (end.score.usd + proxy_usd)).abs() < 1e-9, "{usd}");
        drop(proxy);
    }
    assert!(stub.requests().iter().all(|r| r["key_sent"] == true), "the proxy sent its key upstream");
    let stderr: Vec<String> = std::fs::read_dir(&*dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("proxy-stderr"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(stderr.iter().all(|t| t.contains("ANTHROPIC_BASE_URL=http://127.0.0.1:")), "{stderr:?}");
    let texts: Vec<&str> = outputs.iter().chain(&stderr).map(String::as_str).collect();
    assert!(assert_no_canary(&dir, &texts) > 10);
}

/// One HTTP/1.1 POST over a plain socket; the whole answer (head and body) as text.
fn post(url: &str, path: &str, body: &Value) -> String {
    let addr = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    let body = body.to_string();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nauthorization: Bearer client-own-key\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn a_streamed_answer_is_relayed_and_metered_and_a_down_upstream_gives_a_502_row() {
    let dir = tmp("proxy_stream");
    let stub = StubProc::start(&dir, json!({"then": "done"}));
    let run_dir = dir.join("run");
    let proxy = ProxyProc::start(&dir, &format!("{}/v1", stub.url), &run_dir, &[]);
    let ask = json!({"model": "stub-model", "messages": [{"role": "user", "content": "hello"}],
        "stream": true, "stream_options": {"include_usage": true}});
    let text = post(&proxy.url, "/v1/chat/completions", &ask);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("text/event-stream") && text.contains("data: [DONE]"), "{text}");
    let usage = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find_map(|v| v["usage"].is_object().then(|| v["usage"].clone()))
        .expect("the stream carries its usage");
    let rows: Vec<ProxyCallRow> = read_rows(&run_dir).unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert!(r.stream && r.status == 200 && r.protocol == "openai-chat");
    assert_eq!(r.usage.input_tokens, usage["prompt_tokens"].as_u64().unwrap());
    assert_eq!(r.usage.output_tokens, usage["completion_tokens"].as_u64().unwrap());
    assert!(r.usage.input_tokens > 0 && r.usage.output_tokens > 0);
    // No model file names the model "stub-model": no price, and it says so.
    assert_eq!((r.usd, r.priced_by.as_deref()), (0.0, None));
    // A GET is relayed, not metered.
    let addr = proxy.url.trim_start_matches("http://").to_string();
    let mut s = TcpStream::connect(&addr).unwrap();
    write!(s, "GET /v1/models HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n").unwrap();
    let mut models = String::new();
    s.read_to_string(&mut models).unwrap();
    assert!(models.starts_with("HTTP/1.1 200") && models.contains("stub-model"), "{models}");
    assert_eq!(read_rows(&run_dir).unwrap().len(), 1);
    // An upstream that is down: a 502 in the protocol's shape, and a row with the error.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let run2 = dir.join("run2");
    let p2 = ProxyProc::start(&dir, &down, &run2, &[]);
    let text = post(&p2.url, "/v1/messages", &json!({"model": "m", "max_tokens": 5, "messages": []}));
    assert!(text.starts_with("HTTP/1.1 502") && text.contains("\"api_error\""), "{text}");
    let rows = read_rows(&run2).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, 502);
    assert!(rows[0].error.as_deref().unwrap_or("").contains("did not answer"), "{:?}", rows[0].error);
    let stderr =
        std::fs::read_to_string(&proxy.stderr).unwrap() + &std::fs::read_to_string(&p2.stderr).unwrap();
    drop((proxy, p2, stub));
    assert_no_canary(&dir, &[&text, &stderr]);
}

#[test]
fn bad_options_are_refused_with_exit_2() {
    let o = Command::new(bin()).args(["proxy", "--run", "x"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--upstream"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = Command::new(bin())
        .args([
            "proxy",
            "--run",
            "x",
            "--upstream",
            "http://127.0.0.1:9",
            "--key-env",
            "ACRES_TEST_UNSET_PROXY_KEY",
        ])
        .env_remove("ACRES_TEST_UNSET_PROXY_KEY")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ACRES_TEST_UNSET_PROXY_KEY is not set"), "{err}");
}

/// One HTTP/1.1 request with `headers` (each `name: value`, the Host among them or not).
fn request(url: &str, method: &str, path: &str, headers: &[String], body: &str) -> String {
    let addr = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for h in headers {
        head += &format!("{h}\r\n");
    }
    write!(
        s,
        "{head}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn a_foreign_host_or_origin_is_refused_and_nothing_reaches_the_upstream() {
    let dir = tmp("proxy_host");
    let stub = StubProc::start(&dir, json!({"then": "done"}));
    let run_dir = dir.join("run");
    let proxy = ProxyProc::start(&dir, &format!("{}/v1", stub.url), &run_dir, &[]);
    let addr = proxy.url.trim_start_matches("http://").to_string();
    let port = addr.rsplit(':').next().unwrap().to_string();
    let ask = json!({"model": "stub-model", "messages": [{"role": "user", "content": "hello"}]}).to_string();
    for (headers, why) in [
        (vec!["host: attacker.example".to_string()], "Host"),
        (vec![format!("host: attacker.example:{port}")], "Host"),
        (vec![], "Host"),
        (vec![format!("host: {addr}"), "origin: http://attacker.example".into()], "Origin"),
        (vec![format!("host: {addr}"), "origin: null".into()], "Origin"),
    ] {
        let text = request(&proxy.url, "POST", "/v1/chat/completions", &headers, &ask);
        assert!(text.starts_with("HTTP/1.1 403"), "{headers:?}: {text}");
        assert!(
            text.contains(&format!("Forbidden: {why} header is not allowed"))
                || (headers.is_empty() && text.contains("Host")),
            "{headers:?}: {text}"
        );
    }
    assert!(stub.requests().is_empty(), "nothing was relayed: {:?}", stub.requests());
    assert!(read_rows(&run_dir).unwrap_or_default().is_empty(), "no call metered");
    // The same call from this machine's client (its own origin, or none) goes through.
    for headers in [
        vec![format!("host: localhost:{port}")],
        vec![format!("host: {addr}"), format!("origin: http://127.0.0.1:{port}")],
    ] {
        let text = request(&proxy.url, "POST", "/v1/chat/completions", &headers, &ask);
        assert!(text.starts_with("HTTP/1.1 200"), "{headers:?}: {text}");
    }
    assert_eq!(stub.requests().len(), 2);
    drop((proxy, stub));
}
