//! Test support for the DDS tests: the network-namespace check, the two node processes behind
//! guards that kill them on drop, a test client node, and polling against deadlines.
//!
//! NETWORK SAFETY: every test here creates DDS participants. They run only inside a private
//! network namespace whose only interface is `lo` (`tools/test.sh` runs them under
//! `unshare -n` with `--include-ignored`); each is `#[ignore]`d with that reason, and fails
//! when run outside one.
//! All participants are loopback-only (`ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use acres_msgs::acres_interfaces::{Heartbeat, Observation, SkillEvent, SkillGoal};
use acres_msgs::geometry_msgs::Twist;
use acres_ros::action::SkillActionClient;
use acres_ros::env::{DiscoveryRange, RosEnv};
use acres_ros::{qos, Pub, RosArgs, RosNode, Sub};

pub use acres_ros::testing::{poll, Proc};

/// Fails the test unless this process is in a private network namespace with only `lo` (every
/// test here is `#[ignore]`d for that reason and run by `tools/test.sh` under `unshare -n`).
pub fn require_netns() {
    acres_ros::testing::assert_private_netns("DDS TEST");
}

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repo root")
}

/// A scenario file of the shipped set.
pub fn scenario(name: &str) -> String {
    repo().join("scenarios").join(format!("{name}.json")).display().to_string()
}

/// A node executable: from `ACRES_NODES_DIR` when set (tools/ros_test.sh runs this client of one
/// backend against the nodes of the other), else beside this test.
fn bin(name: &str) -> PathBuf {
    match std::env::var_os("ACRES_NODES_DIR") {
        Some(dir) => {
            let p = PathBuf::from(dir).join(name);
            assert!(p.exists(), "ACRES_NODES_DIR has no {}", p.display());
            p
        }
        None => acres_ros::testing::workspace_bin(name, "cargo build -p acres_core -p acres_vehicle_node"),
    }
}

/// The backend of the nodes under test: `ACRES_NODES_BACKEND` (set with `ACRES_NODES_DIR`), else
/// this client's own.
pub fn nodes_backend() -> String {
    std::env::var("ACRES_NODES_BACKEND").unwrap_or_else(|_| acres_ros::BACKEND.to_string())
}

fn spawn(name: &'static str, exe: &str, domain: u16, params: &[String]) -> Proc {
    let mut cmd = Command::new(bin(exe));
    cmd.arg("--ros-args");
    for p in params {
        // `__ns:=`, `__node:=` and `/topic:=` are remap rules; the rest are parameters.
        let flag = if p.starts_with("__") || p.starts_with('/') { "-r" } else { "-p" };
        cmd.args([flag, p]);
    }
    cmd.env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DISTRO", "jazzy")
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env(
            "RUST_LOG",
            std::env::var("ACRES_NODE_LOG")
                .unwrap_or_else(|_| "warn,rustdds=off,ros2_client::service::wrappers=error".into()),
        )
        .stdin(Stdio::null());
    Proc { child: cmd.spawn().unwrap_or_else(|e| panic!("{exe}: {e}")), name }
}

/// Starts the core node on `scenario` at `rate`.
pub fn core_node(domain: u16, scenario: &str, rate: f64, extra: &[&str]) -> Proc {
    let mut p = vec![format!("scenario:={scenario}"), format!("rate:={rate}")];
    p.extend(extra.iter().map(|s| s.to_string()));
    spawn("core", "acres_core_node", domain, &p)
}

/// Starts the vehicle node on `scenario` (sim time).
pub fn vehicle_node(domain: u16, scenario: &str, extra: &[&str]) -> Proc {
    let mut p = vec![format!("scenario:={scenario}"), "use_sim_time:=true".into()];
    p.extend(extra.iter().map(|s| s.to_string()));
    spawn("vehicle", "acres_vehicle_node", domain, &p)
}

/// The test's own node: the action client, the vehicle's topics, heartbeats.
pub struct Client {
    /// The node.
    pub node: RosNode,
    /// `/acres/skill`.
    pub skill: SkillActionClient,
    /// `/acres/events`.
    pub events: Sub<SkillEvent>,
    /// `/acres/observation`.
    pub obs: Sub<Observation>,
    /// `/cmd_vel` as the vehicle node publishes it.
    pub cmd_vel: Sub<Twist>,
    /// `/acres/skill/heartbeat`.
    pub beat: Pub<Heartbeat>,
    /// Every event received so far.
    pub seen: Vec<SkillEvent>,
    /// The newest observation.
    pub last_obs: Option<Observation>,
    seq: u64,
}

impl Client {
    /// A client in `domain`, loopback only, waiting for the action server.
    ///
    /// A Fast DDS participant that drops the RustDDS node's one answer to its first SPDP
    /// announcement did not know the node until its next announcement, 10 s later (docs/ros.md,
    /// "A discovery race at start-up"; patched in vendor/rustdds): a client that has not seen the
    /// server after 10 s is still dropped and made again (a new participant, discovered afresh),
    /// at most twice. Each new try is printed.
    pub fn new(domain: u16, framing: &str) -> Client {
        for attempt in 1..=3 {
            let c = Self::new_plain_framed(domain, framing);
            if c.skill.wait_for_server(&c.node, Duration::from_secs(10)) {
                return c;
            }
            eprintln!("the action server was not discovered within 10 s (client {attempt} of 3)");
        }
        panic!("the action server was not discovered by 3 clients in turn (10 s each)");
    }

    /// A client that does not wait for an action server (tests of the core node alone).
    pub fn new_plain(domain: u16) -> Client {
        Self::new_plain_framed(domain, "fastrtps")
    }

    fn new_plain_framed(domain: u16, framing: &str) -> Client {
        let args = RosArgs::parse(
            ["test", "--ros-args", "-p", &format!("rmw_framing:={framing}")],
            "acres_test_client",
        )
        .unwrap();
        let mut node =
            RosNode::new(args, RosEnv { domain_id: domain, range: DiscoveryRange::Localhost }).unwrap();
        let skill = SkillActionClient::new(&mut node, "/acres/skill").unwrap();
        Client {
            events: node.subscription("/acres/events", qos::default_profile()).unwrap(),
            obs: node.subscription("/acres/observation", qos::default_profile()).unwrap(),
            cmd_vel: node.subscription("/cmd_vel", qos::default_profile()).unwrap(),
            beat: node.publisher("/acres/skill/heartbeat", qos::default_profile()).unwrap(),
            skill,
            node,
            seen: Vec::new(),
            last_obs: None,
            seq: 0,
        }
    }

    /// Takes what arrived.
    pub fn pump(&mut self) {
        while let Some(e) = self.events.take() {
            self.seen.push(e);
        }
        if let Some(o) = self.obs.latest() {
            self.last_obs = Some(o);
        }
    }

    /// Waits for the first observation (the vehicle node has odometry).
    pub fn wait_for_odometry(&mut self, timeout: Duration) {
        let ok = poll(timeout, || {
            self.pump();
            self.last_obs.clone()
        });
        assert!(ok.is_some(), "no /acres/observation within {timeout:?}");
    }

    /// Waits for an event named `name` (matching `f`) that comes after this call, up to `timeout`.
    pub fn wait_event(
        &mut self,
        timeout: Duration,
        name: &str,
        f: impl Fn(&SkillEvent) -> bool,
    ) -> Option<SkillEvent> {
        let from = self.seen.len();
        self.event_since(from, timeout, name, f)
    }

    /// An event named `name` (matching `f`) seen since the client started, waiting up to
    /// `timeout` for it: events and action results travel on different topics, so a result
    /// can arrive before the event that the node published first.
    pub fn seen_event(
        &mut self,
        timeout: Duration,
        name: &str,
        f: impl Fn(&SkillEvent) -> bool,
    ) -> Option<SkillEvent> {
        self.event_since(0, timeout, name, f)
    }

    /// The first event named `name` (matching `f`) from the `from`-th seen on, waiting up to
    /// `timeout`.
    fn event_since(
        &mut self,
        from: usize,
        timeout: Duration,
        name: &str,
        f: impl Fn(&SkillEvent) -> bool,
    ) -> Option<SkillEvent> {
        poll(timeout, || {
            self.pump();
            self.seen[from..].iter().find(|e| e.event == name && f(e)).cloned()
        })
    }

    /// Publishes one heartbeat.
    pub fn beat(&mut self) {
        self.seq += 1;
        self.beat.publish(Heartbeat {
            stamp: acres_ros::node::stamp(acres_ros::node::wall_s()),
            seq: self.seq,
            sender: "test".into(),
        });
    }
}

/// A planner's side that is alive: its own (loopback-only) node publishes a heartbeat every
/// 0.1 s on a thread until dropped (the vehicle node's deadman holds a goal without beats).
pub struct Beater {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    paused: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Beater {
    /// Starts beating in `domain`.
    pub fn start(domain: u16) -> Beater {
        Self::start_with(domain, false)
    }

    /// Makes the beater's participant and publisher now (so discovery is done before it is
    /// needed) but sends no beat until [`Beater::resume`].
    pub fn start_paused(domain: u16) -> Beater {
        Self::start_with(domain, true)
    }

    /// Starts sending beats.
    pub fn resume(&self) {
        self.paused.store(false, std::sync::atomic::Ordering::Relaxed);
    }

    fn start_with(domain: u16, paused: bool) -> Beater {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let paused = std::sync::Arc::new(AtomicBool::new(paused));
        let hold = paused.clone();
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let args = RosArgs::parse(["beater"], "acres_test_beater").unwrap();
            let mut node =
                RosNode::new(args, RosEnv { domain_id: domain, range: DiscoveryRange::Localhost }).unwrap();
            let beat: Pub<Heartbeat> =
                node.publisher("/acres/skill/heartbeat", qos::default_profile()).unwrap();
            let mut seq = 0;
            while !flag.load(Ordering::Relaxed) {
                if hold.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
                seq += 1;
                beat.publish(Heartbeat {
                    stamp: acres_ros::node::stamp(acres_ros::node::wall_s()),
                    seq,
                    sender: "test-beater".into(),
                });
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Beater { stop, paused, thread: Some(thread) }
    }
}

impl Drop for Beater {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A goal.
pub fn goal(skill: &str, field: &str) -> SkillGoal {
    SkillGoal {
        skill: skill.into(),
        place: String::new(),
        field: field.into(),
        seconds: f64::NAN,
        speed_cap_mps: f64::NAN,
    }
}
