//! Test support for the link tests: the network-namespace check, the node processes and the
//! harness behind guards that kill them on drop, a raw link client, and polling against
//! deadlines.
//!
//! NETWORK SAFETY: these tests start DDS participants (the nodes, the bridge, the tests' own
//! observer). They run only inside a private network namespace whose only interface is `lo`
//! (`tools/test.sh` runs them under `unshare -n` with `--include-ignored`); each is `#[ignore]`d
//! with that reason, and fails when run outside one. Every participant is loopback-only
//! (`ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`) and the bridge binds 127.0.0.1.

#![allow(dead_code)]

pub mod proxy;
pub mod shape;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use acres_link_protocol as link;
use link::tls::Sealer;

pub use acres_ros::testing::{poll, Proc};

/// Fails the test unless this process is in a private network namespace with only `lo` (every
/// test here is `#[ignore]`d for that reason and run by `tools/test.sh` under `unshare -n`).
pub fn require_netns() {
    acres_ros::testing::assert_private_netns("LINK TEST");
}

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repo root")
}

/// A binary of the workspace (built by `cargo build` / `tools/test.sh`).
pub fn bin(name: &str) -> PathBuf {
    acres_ros::testing::workspace_bin(
        name,
        "cargo build -p acres_core -p acres_vehicle_node -p acres_bridge -p acres-harness",
    )
}

fn ros_env(cmd: &mut Command) {
    cmd.env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DISTRO", "jazzy")
        .env("ROS_DOMAIN_ID", "0")
        .env("RUST_LOG", "info,rustdds=off,ros2_client=error")
        .stdin(Stdio::null());
}

/// Starts a ROS node binary with `-p` parameters, its output in `log`.
pub fn node(name: &'static str, exe: &Path, params: &[String], log: &Path, envs: &[(&str, &str)]) -> Proc {
    let mut cmd = Command::new(exe);
    cmd.arg("--ros-args");
    for p in params {
        cmd.args(["-p", p]);
    }
    ros_env(&mut cmd);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let f = std::fs::File::create(log).expect("log file");
    cmd.stdout(f.try_clone().expect("log")).stderr(f);
    Proc { child: cmd.spawn().unwrap_or_else(|e| panic!("{name}: {e}")), name }
}

/// Starts the bridge alone on `port` (TLS unless `extra` says otherwise; its fingerprint
/// written to `bridge.fingerprint` beside `log`).
pub fn bridge(port: u16, extra: &[&str], log: &Path, envs: &[(&str, &str)]) -> Proc {
    let fp = log.with_file_name("bridge.fingerprint");
    let mut p = vec![
        "host:=127.0.0.1".to_string(),
        format!("port:={port}"),
        format!("fingerprint_file:={}", fp.display()),
    ];
    p.extend(extra.iter().map(|s| s.to_string()));
    node("bridge", Path::new(env!("CARGO_BIN_EXE_acres_bridge")), &p, log, envs)
}

/// A temporary folder of a test, removed on drop unless the test failed (its logs then stay).
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A fresh `acres-link-TAG-PID` in the temporary folder.
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("acres-link-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("logs kept in {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The simulated stack: core node, vehicle node, bridge, on a link scenario.
pub struct Stack {
    /// The core node.
    pub core: Proc,
    /// The vehicle node.
    pub vehicle: Proc,
    /// The bridge.
    pub bridge: Proc,
    /// The bridge's port.
    pub port: u16,
    /// The logs' folder (the last field: dropped after the nodes are killed).
    pub dir: TempDir,
}

/// A scenario of `scenarios/link`.
pub fn scenario(name: &str) -> String {
    repo().join("scenarios/link").join(format!("{name}.json")).display().to_string()
}

impl Stack {
    /// Starts the three nodes (core at `rate` × real time).
    pub fn start(tag: &str, scenario_name: &str, port: u16, rate: f64, vehicle_extra: &[&str]) -> Stack {
        let dir = TempDir::new(tag);
        let sc = scenario(scenario_name);
        let maps = repo().join("scenarios/maps").display().to_string();
        let core = node(
            "core",
            &bin("acres_core_node"),
            &[format!("scenario:={sc}"), format!("maps_dir:={maps}"), format!("rate:={rate}")],
            &dir.join("core.log"),
            &[],
        );
        let mut vp =
            vec![format!("scenario:={sc}"), format!("maps_dir:={maps}"), "use_sim_time:=true".into()];
        vp.extend(vehicle_extra.iter().map(|s| s.to_string()));
        let vehicle = node("vehicle", &bin("acres_vehicle_node"), &vp, &dir.join("vehicle.log"), &[]);
        let bridge = bridge(port, &["use_sim_time:=true"], &dir.join("bridge.log"), &[]);
        Stack { core, vehicle, bridge, port, dir }
    }

    /// Starts a harness run of `scenario_name` over the link, its run folders under `dir/out`.
    pub fn harness(&self, scenario_name: &str, extra: &[&str]) -> Proc {
        self.harness_via(self.port, scenario_name, extra)
    }

    /// As [`Stack::harness`], connecting to `port` (a proxy in front of the bridge).
    pub fn harness_via(&self, port: u16, scenario_name: &str, extra: &[&str]) -> Proc {
        let mut cmd = Command::new(bin("acres-harness"));
        cmd.args([
            "run",
            "--scenario",
            &scenario(scenario_name),
            "--world",
            "link",
            "--link-host",
            "127.0.0.1",
        ])
        .args(["--link-port", &port.to_string(), "--link-fingerprint", &fingerprint(&self.dir), "--out"])
        .arg(self.dir.join("out"))
        .args(extra)
        .current_dir(repo());
        let f = std::fs::File::create(self.dir.join("harness.log")).expect("log");
        cmd.stdout(f.try_clone().expect("log")).stderr(f).stdin(Stdio::null());
        Proc { child: cmd.spawn().expect("harness"), name: "harness" }
    }

    /// The run folder of `scenario_name`: `<name>.partial` while the run goes on (a run takes its
    /// name when it has ended), else `<name>`.
    pub fn run_dir(&self, scenario_name: &str) -> PathBuf {
        let done = self.dir.join("out").join(format!("{scenario_name}__checked__scripted"));
        let partial = self.dir.join("out").join(format!("{scenario_name}__checked__scripted.partial"));
        if partial.is_dir() {
            partial
        } else {
            done
        }
    }

    /// The rows written so far.
    pub fn rows(&self, scenario_name: &str) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.run_dir(scenario_name).join("run.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// A log's text.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(format!("{name}.log"))).unwrap_or_default()
    }
}

/// `acres-harness validate FOLDER` succeeds.
pub fn validates(folder: &Path) -> bool {
    Command::new(bin("acres-harness")).arg("validate").arg(folder).status().is_ok_and(|s| s.success())
}

/// Wall seconds since the epoch.
pub fn wall_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// The fingerprint the bridge whose logs are in `dir` wrote (`fingerprint_file`), waiting for
/// it up to 20 s.
pub fn fingerprint(dir: &Path) -> String {
    let f = dir.join("bridge.fingerprint");
    poll(Duration::from_secs(20), || std::fs::read_to_string(&f).ok().filter(|t| t.ends_with('\n')))
        .unwrap_or_else(|| panic!("the bridge wrote no fingerprint to {}", f.display()))
        .trim()
        .to_string()
}

/// A raw link client (the tests speak the protocol by hand), plaintext or TLS.
pub struct Raw {
    /// The socket.
    pub w: TcpStream,
    sealer: Option<Sealer>,
    r: BufReader<Box<dyn Read + Send>>,
    /// The bridge's nonce of this connection (from its hello).
    pub bridge_nonce: String,
    /// The last attach line sent, as sent before TLS (for the replay test).
    pub last_attach: Vec<u8>,
    /// The sweep encoding the attach asks for.
    pub sweep_encoding: link::SweepEncoding,
}

impl Raw {
    fn socket(port: u16) -> TcpStream {
        let s = poll(Duration::from_secs(20), || TcpStream::connect(("127.0.0.1", port)).ok())
            .expect("the bridge does not listen");
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    }

    /// Connects in plaintext, retrying until the bridge listens (up to 20 s).
    pub fn connect(port: u16) -> Raw {
        let s = Raw::socket(port);
        let r: Box<dyn Read + Send> = Box::new(s.try_clone().unwrap());
        Raw {
            r: BufReader::new(r),
            w: s,
            sealer: None,
            bridge_nonce: String::new(),
            last_attach: Vec::new(),
            sweep_encoding: link::SweepEncoding::MmZstd,
        }
    }

    /// Connects with TLS pinning `fingerprint`; the handshake's error when it fails.
    pub fn try_tls(port: u16, fingerprint: &str) -> Result<Raw, link::tls::TlsError> {
        let pin = link::tls::parse_fingerprint(fingerprint).expect("a fingerprint");
        let (s, r, sealer) = link::tls::client_handshake(Raw::socket(port), &[pin], Duration::from_secs(5))?;
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let r: Box<dyn Read + Send> = Box::new(r);
        Ok(Raw {
            r: BufReader::new(r),
            w: s,
            sealer: Some(sealer),
            bridge_nonce: String::new(),
            last_attach: Vec::new(),
            sweep_encoding: link::SweepEncoding::MmZstd,
        })
    }

    /// Connects with TLS to the bridge whose logs are in `dir`, pinning its fingerprint.
    pub fn tls(port: u16, dir: &Path) -> Raw {
        Raw::try_tls(port, &fingerprint(dir)).expect("the TLS handshake")
    }

    /// Sends raw bytes (sealed on a TLS link).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        match &self.sealer {
            Some(s) => self.w.write_all(&s.seal(bytes)).unwrap(),
            None => self.w.write_all(bytes).unwrap(),
        }
    }

    /// Sends raw bytes (sealed on a TLS link); false when the socket does not take them.
    pub fn try_send_raw(&mut self, bytes: &[u8]) -> bool {
        match &self.sealer {
            Some(s) => self.w.write_all(&s.seal(bytes)).is_ok(),
            None => self.w.write_all(bytes).is_ok(),
        }
    }

    /// Sends a message.
    pub fn send(&mut self, m: &link::FromHarness) {
        self.send_raw(link::encode(m).as_bytes());
    }

    /// The next message other than a step or a sweep; `None` at the end of the stream (or
    /// after 5 s without a line).
    pub fn next(&mut self) -> Option<link::FromBridge> {
        loop {
            match self.next_any()? {
                link::FromBridge::Step(_) | link::FromBridge::Sweep(_) => continue,
                m => return Some(m),
            }
        }
    }

    /// The next sweep line (other lines skipped); `None` at the end of the stream (or after 5 s
    /// without a line).
    pub fn next_sweep(&mut self) -> Option<link::Sweep> {
        loop {
            if let link::FromBridge::Sweep(s) = self.next_any()? {
                return Some(s);
            }
        }
    }

    /// The next message; `None` at the end of the stream.
    fn next_any(&mut self) -> Option<link::FromBridge> {
        let mut line = String::new();
        match self.r.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        match link::decode::<link::FromBridge>(&line) {
            Ok(link::FromBridge::Hello(h)) => {
                self.bridge_nonce = h.nonce.clone();
                Some(link::FromBridge::Hello(h))
            }
            Ok(m) => Some(m),
            Err(e) => panic!("the bridge wrote an unreadable line: {e}"),
        }
    }

    /// Attaches proving `token` (after `next` read the hello).
    pub fn attach(&mut self, version: u32, token: Option<&str>) -> Option<link::FromBridge> {
        let nonce = link::auth::new_nonce();
        let binding = self.sealer.as_ref().map_or_else(Vec::new, |s| s.binding().to_vec());
        let proof = token.map(|t| link::auth::attach_proof(t, &self.bridge_nonce, &nonce, &binding));
        let line = link::encode(&link::FromHarness::Attach(link::Attach {
            version,
            harness: "test".into(),
            nonce,
            proof,
            sweep_encoding: self.sweep_encoding,
        }));
        self.last_attach = line.clone().into_bytes();
        self.send_raw(line.as_bytes());
        self.next()
    }
}
