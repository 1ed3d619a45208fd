//! The link's security with real processes (the bridge, the harness binary, raw TLS clients):
//! a certificate that is not pinned, a wrong token, a replayed attach, a plaintext client of a
//! TLS bridge (and a TLS harness of a plaintext bridge), a plaintext link off loopback, a bridge
//! that cannot prove the token. Each is refused with words on both sides and nothing is
//! executed (the bridge never logs "harness attached"); the token is never in a log. And the
//! hostile client: a silent, dripping or half-done connection never holds the commander slot
//! (attach deadline, pending cap), back-to-back reconnects never meet `busy`, and wrong proofs
//! from one peer are slowed down.
//!
//! NETWORK SAFETY: the bridge creates a DDS participant: these tests run only in a private
//! network namespace (see `util`), loopback-only, the socket on 127.0.0.1.

mod util;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use acres_link_protocol as link;
use link::{FromBridge, RefusedCode};
use util::*;

const TOKEN: &str = "field-secret-77";

/// Runs the harness binary against the bridge on `port` (link_sim_f56); its exit code and
/// output.
fn harness(dir: &Path, port: u16, extra: &[&str], token: Option<&str>) -> (Option<i32>, String) {
    let log = dir.join("harness.log");
    let mut cmd = Command::new(bin("acres-harness"));
    cmd.args(["run", "--scenario", &scenario("link_sim_f56"), "--world", "link", "--link-host", "127.0.0.1"])
        .args(["--link-port", &port.to_string(), "--out"])
        .arg(dir.join("out"))
        .args(extra)
        .current_dir(repo())
        .env_remove("ACRES_LINK_TOKEN")
        .stdin(Stdio::null());
    if let Some(t) = token {
        cmd.env("ACRES_LINK_TOKEN", t);
    }
    let f = std::fs::File::create(&log).unwrap();
    cmd.stdout(f.try_clone().unwrap()).stderr(f);
    let mut p = Proc { child: cmd.spawn().unwrap(), name: "harness" };
    let code = p.wait(Duration::from_secs(40));
    (code, std::fs::read_to_string(&log).unwrap_or_default())
}

/// Nothing was executed: the bridge attached no harness; the token is in no log.
fn nothing_attached(dir: &Path) -> String {
    let log = std::fs::read_to_string(dir.join("bridge.log")).unwrap_or_default();
    assert!(!log.contains("harness attached"), "the bridge attached a harness:\n{log}");
    assert!(!log.contains(TOKEN), "the token is never logged");
    log
}

/// Waits until the bridge's log has `what`.
fn bridge_says(dir: &Path, what: &str) -> String {
    poll(Duration::from_secs(5), || {
        std::fs::read_to_string(dir.join("bridge.log")).ok().filter(|l| l.contains(what))
    })
    .unwrap_or_else(|| {
        panic!(
            "the bridge's log does not say {what:?}:\n{}",
            std::fs::read_to_string(dir.join("bridge.log")).unwrap()
        )
    })
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_certificate_that_is_not_pinned_is_refused_on_both_sides() {
    require_netns();
    let t0 = Instant::now();
    let dir = TempDir::new("sec-pin");
    let _b = bridge(5671, &[], &dir.join("bridge.log"), &[("ACRES_LINK_TOKEN", TOKEN)]);
    let real = fingerprint(&dir);
    let wrong = format!("sha256:{}", "0f".repeat(32));
    let (code, out) = harness(&dir, 5671, &["--link-fingerprint", &wrong], Some(TOKEN));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("is not pinned") && out.contains(real.trim_start_matches("sha256:")), "{out}");
    bridge_says(&dir, "does not trust this bridge's certificate");
    nothing_attached(&dir);
    // A raw client pinning another certificate fails its handshake.
    assert!(matches!(Raw::try_tls(5671, &wrong), Err(link::tls::TlsError::NotPinned { .. })));
    eprintln!("not pinned: {:?}", t0.elapsed());
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_wrong_token_is_refused_on_both_sides() {
    require_netns();
    let dir = TempDir::new("sec-token");
    let _b = bridge(5672, &[], &dir.join("bridge.log"), &[("ACRES_LINK_TOKEN", TOKEN)]);
    let trust = dir.join("trust");
    std::fs::write(&trust, format!("# the bridge\n{}\n", fingerprint(&dir))).unwrap();
    let (code, out) =
        harness(&dir, 5672, &["--link-trust", trust.to_str().unwrap()], Some("field-secret-78"));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("refused the link (Token)") && out.contains("wrong token"), "{out}");
    let (code, out) = harness(&dir, 5672, &["--link-trust", trust.to_str().unwrap()], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("no proof"), "without a token: {out}");
    let log = bridge_says(&dir, "attach refused");
    assert!(log.contains("wrong token") && log.contains("no proof"), "{log}");
    nothing_attached(&dir);
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_replayed_attach_is_refused() {
    require_netns();
    let dir = TempDir::new("sec-replay");
    let _b = bridge(5673, &[], &dir.join("bridge.log"), &[("ACRES_LINK_TOKEN", TOKEN)]);
    // A good attach, recorded (what an eavesdropper inside TLS could at best have).
    let mut c = Raw::tls(5673, &dir);
    assert!(matches!(c.next(), Some(FromBridge::Hello(h)) if h.token_required));
    match c.attach(link::PROTOCOL_VERSION, Some(TOKEN)) {
        Some(FromBridge::Welcome(w)) => assert!(w.proof.is_some(), "the bridge proves the token"),
        other => panic!("{other:?}"),
    }
    let recorded = c.last_attach.clone();
    c.send(&link::FromHarness::End(link::End { cause: "done".into() }));
    assert!(c.next().is_none());
    bridge_says(&dir, "harness detached");
    // The same attach on a new connection.
    let mut r = Raw::tls(5673, &dir);
    assert!(matches!(r.next(), Some(FromBridge::Hello(_))));
    r.send_raw(&recorded);
    match r.next() {
        Some(FromBridge::Refused(x)) => {
            assert_eq!(x.code, RefusedCode::Replay, "{x:?}");
            assert!(x.reason.contains("replayed"), "{x:?}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(r.next().is_none(), "closed after the refusal");
    bridge_says(&dir, "replayed attach");
    let log = std::fs::read_to_string(dir.join("bridge.log")).unwrap();
    assert_eq!(log.matches("harness attached").count(), 1, "only the first attach:\n{log}");
    assert!(!log.contains(TOKEN));
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn plaintext_and_tls_do_not_mix() {
    require_netns();
    let dir = TempDir::new("sec-plain");
    let _b = bridge(5674, &[], &dir.join("bridge.log"), &[]);
    fingerprint(&dir);
    // A plaintext harness of a TLS bridge.
    let (code, out) = harness(&dir, 5674, &[], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("refused the link (Tls)") && out.contains("speaks TLS only"), "{out}");
    bridge_says(&dir, "plaintext client refused");
    nothing_attached(&dir);
    // A TLS harness of a plaintext bridge.
    let pdir = TempDir::new("sec-plain-bridge");
    let _p = bridge(5675, &["tls:=false"], &pdir.join("bridge.log"), &[]);
    let pin = format!("sha256:{}", "ab".repeat(32));
    let ok = poll(Duration::from_secs(20), || std::net::TcpStream::connect(("127.0.0.1", 5675)).ok());
    assert!(ok.is_some(), "the plaintext bridge listens");
    let (code, out) = harness(&pdir, 5675, &["--link-fingerprint", &pin], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("TLS handshake failed") && out.contains("--link-insecure"), "{out}");
    nothing_attached(&pdir);
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_plaintext_link_off_loopback_or_a_bad_pin_is_bad_input() {
    require_netns();
    let dir = TempDir::new("sec-input");
    let run = |extra: &[&str]| {
        let out = Command::new(bin("acres-harness"))
            .args(["run", "--scenario", &scenario("link_sim_f56"), "--world", "link"])
            .args(extra)
            .arg("--out")
            .arg(dir.join("out"))
            .current_dir(repo())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (code, err) = run(&["--link-host", "192.0.2.7"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not loopback") && err.contains("--link-insecure"), "{err}");
    let (code, err) = run(&["--link-fingerprint", "abc"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--link-fingerprint") && err.contains("\"abc\""), "{err}");
    let trust = dir.join("trust");
    std::fs::write(&trust, "# ok\nnot-a-fingerprint\n").unwrap();
    let (code, err) = run(&["--link-trust", trust.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("{}:2", trust.display())), "names the file and line: {err}");
}

/// A bridge (this test, plaintext on loopback) that does not know the token: its welcome's
/// proof is wrong, and the harness ends the link before it sends anything else.
#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_bridge_that_cannot_prove_the_token_is_left() {
    require_netns();
    let dir = TempDir::new("sec-fake");
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let fake = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut w = s.try_clone().unwrap();
        let hello = link::Hello {
            version: link::PROTOCOL_VERSION,
            bridge: "impostor".into(),
            token_required: true,
            truth: false,
            nonce: link::auth::new_nonce(),
            sweep_encodings: link::SweepEncoding::ALL.to_vec(),
        };
        w.write_all(link::encode(&FromBridge::Hello(hello)).as_bytes()).unwrap();
        let mut lines = Vec::new();
        for l in BufReader::new(s).lines() {
            match l {
                Ok(l) => lines.push(l),
                Err(_) => break,
            }
            if lines.len() == 1 {
                let welcome = link::Welcome { t_s: 1.0, proof: Some("00".repeat(32)) };
                w.write_all(link::encode(&FromBridge::Welcome(welcome)).as_bytes()).unwrap();
            }
        }
        lines
    });
    let (code, out) = harness(&dir, port, &[], Some(TOKEN));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("does not prove that it knows the token"), "{out}");
    let lines = fake.join().unwrap();
    assert_eq!(lines.len(), 1, "only the attach was sent: {lines:?}");
    assert!(!lines[0].contains(TOKEN), "the token never travels: {}", lines[0]);
}

/// A TCP connection that sends `bytes` and then nothing.
fn idle(port: u16, bytes: &[u8]) -> std::net::TcpStream {
    let mut s =
        poll(Duration::from_secs(20), || std::net::TcpStream::connect(("127.0.0.1", port)).ok()).unwrap();
    s.write_all(bytes).unwrap();
    s
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn silent_dripping_and_half_done_connections_never_hold_the_slot() {
    require_netns();
    let dir = TempDir::new("sec-pending");
    let _b =
        bridge(5676, &["attach_timeout_s:=1.5"], &dir.join("bridge.log"), &[("ACRES_LINK_TOKEN", TOKEN)]);
    fingerprint(&dir);
    // A TLS connection that never attaches, one that drips an attach a byte at a time, a TCP
    // connection stuck in the TLS handshake (its first record, never finished).
    let mut silent = Raw::tls(5676, &dir);
    assert!(matches!(silent.next(), Some(FromBridge::Hello(_))));
    let mut drip = Raw::tls(5676, &dir);
    assert!(matches!(drip.next(), Some(FromBridge::Hello(_))));
    let dripper = std::thread::spawn(move || {
        for b in b"{\"type\":\"attach\",\"version\":3,".iter() {
            if !drip.try_send_raw(&[*b]) {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        drip.next()
    });
    let _half = idle(5676, &[0x16, 0x03, 0x01, 0x02, 0x00]);
    // The real harness attaches at once, the others still pending.
    let t0 = Instant::now();
    let mut h = Raw::tls(5676, &dir);
    assert!(matches!(h.next(), Some(FromBridge::Hello(_))));
    assert!(matches!(h.attach(link::PROTOCOL_VERSION, Some(TOKEN)), Some(FromBridge::Welcome(_))));
    let took = t0.elapsed();
    eprintln!("a harness attached past 3 pending connections in {took:?}");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    // The silent one is told and closed at its deadline (1.5 s after its accept).
    match silent.next() {
        Some(FromBridge::Refused(r)) => assert!(r.reason.contains("no attach within 1.5 s"), "{r:?}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(silent.next().is_none());
    assert!(matches!(dripper.join().unwrap(), Some(FromBridge::Refused(_))), "the dripper is closed");
    bridge_says(&dir, "TLS handshake not done within attach_timeout_s");
    h.send(&link::FromHarness::Ping(link::Ping { n: 1 }));
    assert!(matches!(h.next(), Some(FromBridge::Pong(_))), "the harness stays attached");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn pending_connections_are_capped_the_oldest_dropped() {
    require_netns();
    let dir = TempDir::new("sec-cap");
    let _b = bridge(5677, &[], &dir.join("bridge.log"), &[]);
    let n = acres_bridge::PENDING_MAX + 4;
    let mut flood: Vec<Raw> = (0..n)
        .map(|_| {
            let mut c = Raw::tls(5677, &dir);
            assert!(matches!(c.next(), Some(FromBridge::Hello(_))));
            c
        })
        .collect();
    // The first four were dropped for the newer ones; the newest still wait.
    for c in flood.iter_mut().take(4) {
        assert!(matches!(c.next(), Some(FromBridge::Refused(r)) if r.reason.contains("too many")));
    }
    let last = flood.last_mut().unwrap();
    assert!(matches!(last.attach(link::PROTOCOL_VERSION, None), Some(FromBridge::Welcome(_))));
    bridge_says(&dir, "too many pending");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn twenty_back_to_back_reconnects_never_meet_busy() {
    require_netns();
    let dir = TempDir::new("sec-reconnect");
    let _b = bridge(5678, &[], &dir.join("bridge.log"), &[("ACRES_LINK_TOKEN", TOKEN)]);
    fingerprint(&dir);
    let t0 = Instant::now();
    let mut busy = 0;
    for i in 0..20 {
        let mut c = Raw::tls(5678, &dir);
        assert!(matches!(c.next(), Some(FromBridge::Hello(_))));
        match c.attach(link::PROTOCOL_VERSION, Some(TOKEN)) {
            Some(FromBridge::Welcome(_)) => {}
            Some(FromBridge::Refused(r)) if r.code == RefusedCode::Busy => busy += 1,
            other => panic!("reconnect {i}: {other:?}"),
        }
        // Half end the link, half just close the socket.
        if i % 2 == 0 {
            c.send(&link::FromHarness::End(link::End { cause: "done".into() }));
        }
    }
    eprintln!("20 back-to-back reconnects: {busy} busy, {:?}", t0.elapsed());
    assert_eq!(busy, 0, "busy in {busy} of 20 reconnects");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn wrong_proofs_from_one_peer_are_slowed_down_and_logged_without_the_token() {
    require_netns();
    let dir = TempDir::new("sec-guess");
    let _b = bridge(5679, &[], &dir.join("bridge.log"), &[("ACRES_LINK_TOKEN", TOKEN)]);
    fingerprint(&dir);
    let t0 = Instant::now();
    let mut at = Vec::new();
    for i in 0..6 {
        let mut c = Raw::tls(5679, &dir);
        assert!(matches!(c.next(), Some(FromBridge::Hello(_))));
        let guess = format!("guess-{i}");
        assert!(
            matches!(c.attach(link::PROTOCOL_VERSION, Some(&guess)), Some(FromBridge::Refused(r)) if r.code == RefusedCode::Token)
        );
        at.push(t0.elapsed().as_secs_f64());
    }
    let gaps: Vec<f64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    eprintln!("6 wrong proofs at {at:.2?} s (gaps {gaps:.2?})");
    // Delays of 0.25, 0.5, 1, 2, 2 s before the 2nd..6th checks.
    for (g, want) in gaps.iter().zip([0.25, 0.5, 1.0, 2.0, 2.0]) {
        assert!(*g >= want - 0.05, "gaps {gaps:?}");
    }
    // The right token still attaches (after the delay), and the failures are forgiven.
    let mut c = Raw::tls(5679, &dir);
    assert!(matches!(c.next(), Some(FromBridge::Hello(_))));
    assert!(matches!(c.attach(link::PROTOCOL_VERSION, Some(TOKEN)), Some(FromBridge::Welcome(_))));
    let log = bridge_says(&dir, "harness attached");
    let refusals: Vec<&str> = log.lines().filter(|l| l.contains("attach refused: wrong token")).collect();
    assert_eq!(refusals.len(), 6, "{log}");
    assert!(
        refusals.iter().all(|l| l.contains("127.0.0.1") && l.contains("failures")),
        "the peer is logged:\n{log}"
    );
    assert!(!log.contains(TOKEN) && !log.contains("guess-"), "no token, no guess in the log");
}
