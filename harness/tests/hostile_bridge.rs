//! The harness binary against a hostile or broken bridge: a plain TCP server in this test
//! speaks the link protocol (plaintext, on 127.0.0.1; no DDS, so no namespace is needed) and
//! misbehaves one way per test. Each asserts the outcome: the exit code, the words, the
//! harness's peak memory (`VmHWM`) under a bound, nothing commanded, and a run folder that
//! validates with a bounded number of rows.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acres_link_protocol as link;
use acres_msgs::acres_interfaces::Observation;
use acres_msgs::builtin_interfaces::Time;
use link::{FromBridge, FromHarness};

/// The harness's peak memory allowed in these tests, kB (it is about 40 MB at rest; an
/// unbounded line took it to 5 GB).
const PEAK_KB_MAX: u64 = 400_000;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("acres-hostile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// What the fake bridge's connection can do.
struct Peer {
    w: Arc<Mutex<TcpStream>>,
    r: Option<BufReader<TcpStream>>,
    /// The lines the harness sent.
    lines: Arc<Mutex<Vec<String>>>,
}

impl Peer {
    fn send_raw(&self, bytes: &[u8]) -> bool {
        self.w.lock().unwrap().write_all(bytes).is_ok()
    }

    fn send(&self, m: &FromBridge) -> bool {
        self.send_raw(link::encode(m).as_bytes())
    }

    fn hello(&self, version: u32, token_required: bool) {
        self.send(&FromBridge::Hello(link::Hello {
            version,
            bridge: "hostile".into(),
            token_required,
            truth: false,
            nonce: link::auth::new_nonce(),
            sweep_encodings: link::SweepEncoding::ALL.to_vec(),
        }));
    }

    /// Reads the attach, welcomes, then answers pings and skills (rejected) on a thread.
    fn attach(&mut self) {
        let mut r = self.r.take().unwrap();
        let mut l = String::new();
        r.read_line(&mut l).unwrap();
        assert!(l.contains("\"attach\""), "{l}");
        self.lines.lock().unwrap().push(l);
        self.send(&FromBridge::Welcome(link::Welcome { t_s: 1.0, proof: None }));
        let (w, lines) = (self.w.clone(), self.lines.clone());
        std::thread::spawn(move || loop {
            let mut l = String::new();
            if r.read_line(&mut l).unwrap_or(0) == 0 {
                return;
            }
            let answer = match link::decode::<FromHarness>(&l) {
                Ok(FromHarness::Ping(p)) => Some(FromBridge::Pong(link::Pong { n: p.n, t_s: 1.0 })),
                Ok(FromHarness::Skill(s)) => Some(FromBridge::Reply(link::SkillReply {
                    id: s.id,
                    accepted: false,
                    cause: "a hostile bridge".into(),
                })),
                _ => None,
            };
            lines.lock().unwrap().push(l);
            if let Some(a) = answer {
                let _ = w.lock().unwrap().write_all(link::encode(&a).as_bytes());
            }
        });
    }

    /// A step of the vehicle at time `t_s` at `x` (the start pose's y).
    fn step(&self, seq: u64, t_s: f64, x: f64) -> bool {
        let observation = Observation {
            header: acres_msgs::std_msgs::Header { stamp: Time::from_secs_f64(t_s), frame_id: "map".into() },
            x_m: x,
            y_m: 0.0,
            state: "idle".into(),
            progress: f64::NAN,
            remaining_m: f64::NAN,
            ahead_m: f64::INFINITY,
            hold_since_s: f64::NAN,
            energy_estimate_mj: f64::NAN,
            ..Default::default()
        };
        self.send(&FromBridge::Step(link::Step {
            seq,
            observation,
            events: Vec::new(),
            truth: None,
            dropped_sweeps: 0,
        }))
    }

    /// Two seconds of good steps from t = 100 s at 20 Hz; the next seq.
    fn good_steps(&self) -> u64 {
        for k in 0..40u64 {
            self.step(k + 1, 100.0 + k as f64 * 0.05, 0.0);
        }
        41
    }
}

/// Starts a fake bridge running `script` on its one connection; its port and the thread.
fn fake(script: impl FnOnce(Peer) + Send + 'static) -> (u16, std::thread::JoinHandle<Vec<String>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let peer = Peer {
            w: Arc::new(Mutex::new(s.try_clone().unwrap())),
            r: Some(BufReader::new(s)),
            lines: lines.clone(),
        };
        script(peer);
        std::thread::sleep(Duration::from_millis(200));
        let out = lines.lock().unwrap().clone();
        out
    });
    (port, t)
}

/// The harness's run over the link on `port`: exit code, output, peak memory (kB), time.
struct Ran {
    code: Option<i32>,
    out: String,
    peak_kb: u64,
    took: Duration,
    dir: PathBuf,
}

fn peak_kb(child: &Child) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{}/status", child.id())).ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

fn run(tag: &str, port: u16, token: Option<&str>) -> Ran {
    let dir = tmp(tag);
    let log = dir.join("harness.log");
    let f = std::fs::File::create(&log).unwrap();
    let sc = repo().join("scenarios/link/link_sim_f56.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acres-harness"));
    cmd.args(["run", "--scenario"])
        .arg(&sc)
        .args(["--world", "link", "--link-host", "127.0.0.1", "--link-port", &port.to_string()])
        .args(["--link-silent-s", "2", "--out"])
        .arg(dir.join("out"))
        .current_dir(repo())
        .env_remove("ACRES_LINK_TOKEN")
        .stdin(Stdio::null())
        .stdout(f.try_clone().unwrap())
        .stderr(f);
    if let Some(t) = token {
        cmd.env("ACRES_LINK_TOKEN", t);
    }
    let t0 = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut peak = 0;
    let code = loop {
        if let Some(p) = peak_kb(&child) {
            peak = peak.max(p);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the harness did not end in 60 s: {}", std::fs::read_to_string(&log).unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(&log).unwrap();
    eprintln!("{tag}: exit {code:?} after {:?}, peak {peak} kB", t0.elapsed());
    Ran { code, out, peak_kb: peak, took: t0.elapsed(), dir }
}

impl Ran {
    /// The one run folder: it validates; its rows.
    fn folder_validates(&self) -> Vec<serde_json::Value> {
        let out = self.dir.join("out");
        let folder = std::fs::read_dir(&out)
            .unwrap_or_else(|e| panic!("no run folder in {}: {e}\n{}", out.display(), self.out))
            .map(|e| e.unwrap().path())
            .find(|p| p.is_dir())
            .expect("a run folder");
        let v =
            Command::new(env!("CARGO_BIN_EXE_acres-harness")).arg("validate").arg(&folder).output().unwrap();
        assert!(
            v.status.success(),
            "the folder does not validate:\n{}{}",
            String::from_utf8_lossy(&v.stdout),
            String::from_utf8_lossy(&v.stderr)
        );
        std::fs::read_to_string(folder.join("run.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The `link_lost` row's word and sentence, as `"<kind>: <cause>"`.
fn link_lost_cause(rows: &[serde_json::Value]) -> String {
    let r = rows.iter().find(|r| r["type"] == "link_lost").expect("a link_lost row");
    format!("{}: {}", r["kind"].as_str().expect("a kind word"), r["cause"].as_str().unwrap())
}

#[test]
fn an_endless_hello_is_a_handshake_error_within_its_deadline_in_bounded_memory() {
    let (port, fake) = fake(|p| {
        p.send_raw(b"{\"type\":\"hello\",\"bridge\":\"");
        let chunk = vec![b'x'; 1 << 16];
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) && p.send_raw(&chunk) {}
    });
    let ran = run("endless-hello", port, None);
    assert_eq!(ran.code, Some(1), "{}", ran.out);
    assert!(
        ran.out.contains("expected hello") && ran.out.contains("longer than the 4194304 bytes"),
        "{}",
        ran.out
    );
    assert!(ran.peak_kb < PEAK_KB_MAX, "peak {} kB", ran.peak_kb);
    assert!(ran.took < Duration::from_secs(5), "took {:?}", ran.took);
    drop(fake);
}

#[test]
fn a_dripping_hello_ends_at_the_handshake_deadline() {
    let (port, _fake) = fake(|p| {
        p.send_raw(b"{\"type\":\"hello\"");
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(25) && p.send_raw(b" ") {
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    let ran = run("dripping-hello", port, None);
    assert_eq!(ran.code, Some(1), "{}", ran.out);
    assert!(
        ran.out.contains("expected hello") && ran.out.contains("no whole line within 10 s"),
        "{}",
        ran.out
    );
    assert!(ran.took < Duration::from_secs(15), "took {:?}", ran.took);
}

#[test]
fn an_endless_line_mid_run_is_dropped_in_bounded_memory_and_the_run_ends_link_lost() {
    let (port, _fake) = fake(|mut p| {
        p.hello(link::PROTOCOL_VERSION, false);
        p.attach();
        p.good_steps();
        p.send_raw(b"{\"type\":\"step\",\"pad\":\"");
        let chunk = vec![b'x'; 1 << 16];
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(8) && p.send_raw(&chunk) {}
    });
    let ran = run("endless-line", port, None);
    assert!(ran.peak_kb < PEAK_KB_MAX, "peak {} kB", ran.peak_kb);
    let rows = ran.folder_validates();
    // The fake sends nothing whole and answers no ping: the silence deadline and the ping's
    // deadline (both 2 s) race; either is the loss this case must end in.
    let cause = link_lost_cause(&rows);
    assert!(
        cause.starts_with("silent: no step for 2 s") || cause.starts_with("no_pong: "),
        "{cause}: {}",
        ran.out
    );
}

#[test]
fn with_a_token_a_bridge_that_asks_for_none_is_refused_and_nothing_is_sent() {
    let (port, fake) = fake(|mut p| {
        p.hello(link::PROTOCOL_VERSION, false);
        let mut l = String::new();
        let r = p.r.as_mut().unwrap();
        r.get_ref().set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        if r.read_line(&mut l).unwrap_or(0) > 0 {
            p.lines.lock().unwrap().push(l);
        }
    });
    let ran = run("downgrade", port, Some("field-secret-91"));
    assert_eq!(ran.code, Some(1), "{}", ran.out);
    assert!(ran.out.contains("asks for no token but one is set"), "{}", ran.out);
    assert!(!ran.out.contains("field-secret-91"), "the token is never printed");
    let lines = fake.join().unwrap();
    assert!(lines.is_empty(), "nothing is sent to a downgraded bridge: {lines:?}");
}

#[test]
fn a_bridge_of_another_version_is_refused_naming_both_versions() {
    let (port, fake) = fake(|p| {
        // Version 99 with a field this version does not know.
        p.send_raw(b"{\"type\":\"hello\",\"version\":99,\"bridge\":\"future\",\"compression\":\"zstd\"}\n");
        std::thread::sleep(Duration::from_millis(500));
    });
    let ran = run("version", port, None);
    assert_eq!(ran.code, Some(1), "{}", ran.out);
    let want = link::version_mismatch(99, link::PROTOCOL_VERSION);
    assert!(ran.out.contains(&want), "{}", ran.out);
    assert!(fake.join().unwrap().is_empty(), "no attach to another version");
}

/// A bridge whose steps go wrong after two good seconds: `bad` sends the bad step(s).
fn vehicle_fault(tag: &str, bad: impl FnOnce(&Peer, u64) + Send + 'static) -> (Ran, Vec<serde_json::Value>) {
    let (port, _fake) = fake(move |mut p| {
        p.hello(link::PROTOCOL_VERSION, false);
        p.attach();
        let seq = p.good_steps();
        bad(&p, seq);
        // Good steps again, as a broken vehicle might: the run has ended on the bad one.
        for k in 0..200u64 {
            if !p.step(seq + 1 + k, 103.0 + k as f64 * 0.05, 0.0) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let ran = run(tag, port, None);
    let rows = ran.folder_validates();
    (ran, rows)
}

#[test]
fn a_clock_that_jumps_ends_the_run_without_writing_the_jump() {
    let (ran, rows) = vehicle_fault("clock-jump", |p, seq| {
        p.step(seq, f64::from(1u32 << 31) - 1.0, 0.0);
    });
    let cause = link_lost_cause(&rows);
    assert!(
        cause.starts_with("vehicle_fault: a fault of the vehicle") && cause.contains("jumps ahead"),
        "{cause}"
    );
    let poses = rows.iter().filter(|r| r["type"] == "pose").count();
    assert!(poses < 20, "{poses} pose rows");
    assert!(rows.len() < 200, "{} rows", rows.len());
    assert!(ran.took < Duration::from_secs(20), "took {:?}", ran.took);
}

#[test]
fn non_finite_or_absurd_numbers_end_the_run_naming_the_field() {
    for (tag, x, what) in [
        ("nan", f64::NAN, "x_m is NaN"),
        ("inf", f64::INFINITY, "x_m is inf"),
        ("huge", 1e308, "x_m is 1e308"),
    ] {
        let (_, rows) = vehicle_fault(tag, move |p, seq| {
            p.step(seq, 102.0, x);
        });
        let cause = link_lost_cause(&rows);
        assert!(cause.starts_with("vehicle_fault: ") && cause.contains(what), "{tag}: {cause}");
        assert!(
            rows.iter().filter(|r| r["type"] == "pose").all(|r| r["x"].is_number()),
            "{tag}: a pose row without x"
        );
    }
}

#[test]
fn a_time_that_goes_back_ends_the_run_and_the_folder_validates() {
    let (_, rows) = vehicle_fault("time-back", |p, seq| {
        p.step(seq, 101.0, 0.0);
    });
    let cause = link_lost_cause(&rows);
    assert!(cause.starts_with("vehicle_fault: ") && cause.contains("goes back"), "{cause}");
}
