//! The bridge node `acres_bridge`: the vehicle's ROS 2 side on one hand, the harness's link
//! (`acres_link_protocol` over one TCP socket) on the other.
//!
//! | endpoint | type | does |
//! | --- | --- | --- |
//! | `/acres/skill` (action client) | `acres_interfaces/action/Skill` | a goal for each `skill` line; `reply` on its goal response, `result` at its end |
//! | `/acres/observation` (in) | `acres_interfaces/Observation` | one `step` each |
//! | `/acres/events` (in) | `acres_interfaces/SkillEvent` | in the next `step` |
//! | `/lidar/points` (in, sensor data) | `sensor_msgs/PointCloud2` | packed as it comes, in the harness's encoding; one `sweep` line each, stamped with the cloud's stamp, as soon as the link can take it (the newest waits meanwhile) |
//! | `/acres/sim/truth` (in) | `acres_interfaces/SimTruth` | in the next `step` (simulated runs only) |
//! | `/acres/skill/heartbeat` (out) | `acres_interfaces/Heartbeat` | one per `beat` |
//!
//! Parameters: `host` (127.0.0.1), `port` (5630), `token` (or the environment variable
//! `ACRES_LINK_TOKEN`; empty: none), `tls` (true: TLS 1.3 on the link, see [`secure`]),
//! `tls_identity` (the PEM file of the certificate and its key, made there when missing; empty:
//! a new one in memory at each start), `fingerprint_file` (where the certificate's fingerprint
//! is written; empty: only logged), `allow_insecure` (false: a host other than loopback needs a
//! token and TLS), `attach_timeout_s` (5: a connection that has not attached this long after
//! it was accepted, its TLS handshake included, is closed), `rmw_framing`, `use_sim_time`.
//!
//! The attach is a challenge–response (`acres_link_protocol::auth`): `hello` carries a fresh
//! nonce, the harness proves it knows the token over both nonces and the TLS channel, the
//! bridge proves it back in `welcome`; a harness nonce seen before is refused (`replay`).
//!
//! One harness at a time, and the slot goes only to an attached one ([`pending`]): a connection
//! is pending until it attaches with a valid proof (or, without a token, a valid `attach`),
//! for at most `attach_timeout_s`, at most [`pending::PENDING_MAX`] of them (the oldest is
//! dropped); a wrong proof delays its peer's next check ([`secure::Failures`]). A valid attach
//! while another harness is attached gets `refused` (`busy`) and is closed. When the socket
//! closes or the harness sends `end`, the slot is free before the next attach is answered, and
//! every goal it sent is cancelled and its terminal state confirmed and logged. A harness that
//! stops reading is detached when its outbox passes [`conn::OUTBOX_MAX`] (sweeps are dropped
//! first); a goal whose strings are longer than [`goals::GOAL_STRING_MAX`] is rejected before
//! ROS sees it.
//!
//! The loop waits for work instead of polling for it ([`acres_ros::Waiter`]): a sample on any
//! of its subscriptions or a line from the harness wakes it at once; otherwise it looks at the
//! action client's replies and for new connections every [`ACTION_POLL`]. It packs each sweep as
//! it takes it ([`sweeps`]) and sends it in its own line at once when no sweep is being written
//! (else at the first pass after that one is written, within [`ACTION_POLL`]); a step never
//! waits for a sweep, and a sweep never waits for an observation.
//!
//! Layout: [`Params`], [`Bridge`] (the loop), `conn` (one connection's threads), `goals`,
//! `sweeps` (the newest packed sweep).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

mod conn;
mod goals;
mod pending;
pub mod secure;
pub mod sweeps;

use std::net::{IpAddr, TcpListener};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use acres_link_protocol as link;
use acres_msgs::acres_interfaces::{Heartbeat, Observation, SimTruth, SkillEvent};
use acres_msgs::sensor_msgs::PointCloud2;
use acres_ros::args::ArgsError;
use acres_ros::polled::PolledSkillClient;
use acres_ros::run::Shutdown;
use acres_ros::{qos, NodeError, Pub, RosArgs, RosNode, Sub, Waiter, ACTION_POLL};
use link::{FromBridge, FromHarness, RefusedCode};
use tracing::{debug, info, warn};

pub use conn::{read_line, Conn, Counts, Incoming, OUTBOX_MAX};
pub use goals::GOAL_STRING_MAX;
pub use pending::PENDING_MAX;

/// The environment variable of the token.
pub const TOKEN_ENV: &str = "ACRES_LINK_TOKEN";

/// Truth not seen for this long is not announced in `hello`, s.
const TRUTH_FRESH_S: f64 = 2.0;

/// The bridge's parameters.
#[derive(Clone, PartialEq)]
pub struct Params {
    /// The address to listen on (`host`).
    pub host: String,
    /// The port (`port`; 0: any free port, logged).
    pub port: u16,
    /// The shared token (`token`, or `ACRES_LINK_TOKEN`), if any.
    pub token: Option<String>,
    /// Allow a non-loopback host without a token or without TLS (`allow_insecure`).
    pub allow_insecure: bool,
    /// TLS on the link (`tls`, default true).
    pub tls: bool,
    /// The PEM file of the TLS identity (`tls_identity`; empty: made in memory).
    pub tls_identity: String,
    /// Where the certificate's fingerprint is written (`fingerprint_file`; empty: nowhere).
    pub fingerprint_file: String,
    /// How long a connection may take to attach, TLS handshake included (`attach_timeout_s`).
    pub attach_timeout_s: f64,
}

impl std::fmt::Debug for Params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is never printed.
        f.debug_struct("Params")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allow_insecure", &self.allow_insecure)
            .field("tls", &self.tls)
            .field("tls_identity", &self.tls_identity)
            .field("fingerprint_file", &self.fingerprint_file)
            .field("attach_timeout_s", &self.attach_timeout_s)
            .finish()
    }
}

impl Params {
    /// Reads the parameters (the token from `token`, else the environment).
    pub fn from_args(a: &RosArgs) -> Result<Params, ArgsError> {
        let port = a.f64_or("port", f64::from(link::DEFAULT_PORT))?;
        let token = a.str_or("token", "")?;
        let token = Some(token)
            .filter(|t| !t.is_empty())
            .or_else(|| std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty()));
        Ok(Params {
            host: a.str_or("host", "127.0.0.1")?,
            port: port.clamp(0.0, 65535.0) as u16,
            token,
            allow_insecure: a.bool_or("allow_insecure", false)?,
            tls: a.bool_or("tls", true)?,
            tls_identity: a.str_or("tls_identity", "")?,
            fingerprint_file: a.str_or("fingerprint_file", "")?,
            attach_timeout_s: a.f64_or("attach_timeout_s", 5.0)?,
        })
    }

    /// Refuses a non-loopback host without a token, or without TLS, unless `allow_insecure`.
    pub fn check(&self) -> Result<(), String> {
        if !(self.attach_timeout_s.is_finite()
            && self.attach_timeout_s > 0.0
            && self.attach_timeout_s <= 3600.0)
        {
            return Err(format!(
                "attach_timeout_s is {}: it must be more than 0 and at most 3600 s",
                self.attach_timeout_s
            ));
        }
        let loopback = self.host == "localhost" || self.host.parse::<IpAddr>().is_ok_and(|a| a.is_loopback());
        if !loopback && self.token.is_none() && !self.allow_insecure {
            return Err(format!(
                "host {} is not loopback and no token is set: set the token (-p token:=... or {TOKEN_ENV}) or -p allow_insecure:=true",
                self.host
            ));
        }
        if !loopback && !self.tls && !self.allow_insecure {
            return Err(format!(
                "host {} is not loopback and tls is false: a plaintext link off this machine needs -p allow_insecure:=true",
                self.host
            ));
        }
        Ok(())
    }
}

/// The bridge: ROS endpoints, the listening socket, the attached harness.
pub struct Bridge {
    node: RosNode,
    params: Params,
    listener: TcpListener,
    security: secure::Security,
    /// The outcomes of the TLS handshakes (plaintext connections at once).
    accepted_tx: Sender<secure::Handshaken>,
    accepted: Receiver<secure::Handshaken>,
    nonces: secure::Nonces,
    /// Connections not attached yet: in their TLS handshake, then waiting for an attach.
    pending: pending::Queue,
    failures: secure::Failures,
    client: PolledSkillClient,
    observation: Sub<Observation>,
    events: Sub<SkillEvent>,
    points: Sub<PointCloud2>,
    sweeps: sweeps::Sweeps,
    truth: Sub<SimTruth>,
    /// Wakes the loop: a sample on a subscription, or a line from the harness (`conn`).
    waiter: Waiter,
    heartbeat: Pub<Heartbeat>,
    /// The attached harness (the commander slot).
    conn: Option<Attached>,
    goals: goals::Goals,
    truth_seen: Option<Instant>,
}

struct Attached {
    conn: Conn,
    seq: u64,
    events: Vec<SkillEvent>,
    truth: Option<SimTruth>,
    beats: u64,
}

impl Bridge {
    /// Makes the endpoints and binds the socket.
    pub fn new(mut node: RosNode, params: Params) -> anyhow::Result<Bridge> {
        params.check().map_err(|e| anyhow::anyhow!(e))?;
        let security = secure::Security::new(params.tls, &params.tls_identity, &params.fingerprint_file)?;
        let listener = TcpListener::bind((params.host.as_str(), params.port))
            .map_err(|e| anyhow::anyhow!("binding {}:{}: {e}", params.host, params.port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        info!(%addr, token = params.token.is_some(), tls = security.tls(), "link listening");
        let ros = |e: NodeError| anyhow::anyhow!("{e}");
        let mut observation = node.subscription("acres/observation", qos::default_profile()).map_err(ros)?;
        let mut events = node.subscription("acres/events", qos::default_profile()).map_err(ros)?;
        let mut points = node.subscription("lidar/points", qos::sensor_data()).map_err(ros)?;
        let mut truth = node.subscription("acres/sim/truth", qos::default_profile()).map_err(ros)?;
        let mut waiter = Waiter::new()?;
        waiter.watch(&mut observation)?;
        waiter.watch(&mut events)?;
        waiter.watch(&mut points)?;
        waiter.watch(&mut truth)?;
        let (accepted_tx, accepted) = channel();
        Ok(Bridge {
            security,
            accepted_tx,
            accepted,
            nonces: secure::Nonces::default(),
            pending: pending::Queue::default(),
            failures: secure::Failures::default(),
            client: PolledSkillClient::new(&mut node, "acres/skill").map_err(ros)?,
            observation,
            events,
            points,
            sweeps: sweeps::Sweeps::default(),
            truth,
            waiter,
            heartbeat: node.publisher("acres/skill/heartbeat", qos::default_profile()).map_err(ros)?,
            node,
            params,
            listener,
            conn: None,
            goals: goals::Goals::default(),
            truth_seen: None,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.listener.local_addr()
    }

    /// Runs until a signal; then cancels every open goal.
    pub fn run(mut self, shutdown: &Shutdown) {
        while !shutdown.requested() {
            if !self.turn() {
                self.waiter.wait(ACTION_POLL);
            }
        }
        self.detach("the bridge stops");
        let deadline = Instant::now() + Duration::from_secs(2);
        while !self.goals.is_empty() && Instant::now() < deadline {
            self.goals.poll(&self.client);
            std::thread::sleep(Duration::from_millis(5));
        }
        info!("bridge stopped");
    }

    /// One pass over everything; true when something was done. The attached harness's lines
    /// go first: an `end` or a close frees the slot before a new attach is answered.
    fn turn(&mut self) -> bool {
        let mut busy = self.read_link();
        busy |= self.take_connections();
        busy |= self.read_ros();
        let out = self.goals.poll(&self.client);
        busy |= !out.is_empty();
        if let Some(a) = &mut self.conn {
            busy |= a.send_sweep(&mut self.sweeps);
            for m in &out {
                a.conn.send(m);
            }
            if let Some(queued) = a.conn.overflowed() {
                let why = format!(
                    "the harness stopped reading: {queued} bytes queued for it, more than {OUTBOX_MAX}"
                );
                warn!(peer = %a.conn.peer, dropped_sweeps = self.sweeps.dropped(), "{why}");
                self.detach(&why);
            }
        }
        busy
    }

    fn hello(&self, nonce: &str) -> link::Hello {
        link::Hello {
            version: link::PROTOCOL_VERSION,
            bridge: format!("acres_bridge {}", env!("CARGO_PKG_VERSION")),
            token_required: self.params.token.is_some(),
            truth: self.truth_seen.is_some_and(|t| t.elapsed().as_secs_f64() < TRUTH_FRESH_S),
            nonce: nonce.to_string(),
            sweep_encodings: link::SweepEncoding::ALL.to_vec(),
        }
    }

    /// Handles the harness's lines; true when any came.
    fn read_link(&mut self) -> bool {
        let mut busy = false;
        loop {
            let Some(a) = &self.conn else { return busy };
            let item = match a.conn.rx.try_recv() {
                Ok(i) => i,
                Err(std::sync::mpsc::TryRecvError::Empty) => return busy,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => Incoming::Closed,
            };
            busy = true;
            match item {
                Incoming::Closed => {
                    info!(peer = %a.conn.peer, "link closed by the harness");
                    self.detach("the socket closed");
                }
                Incoming::Line(Err(e)) => {
                    debug!(error = %e, "unreadable line");
                    a.conn
                        .send(&FromBridge::Error(link::ErrorLine { code: e.code(), message: e.to_string() }));
                }
                Incoming::Line(Ok(m)) => self.on_message(m),
            }
        }
    }

    fn on_message(&mut self, m: FromHarness) {
        let now = self.node.now_s();
        let Some(a) = self.conn.as_mut() else { return };
        match m {
            FromHarness::Attach(_) => a.conn.send(&FromBridge::Error(link::ErrorLine {
                code: link::ErrorCode::OutOfOrder,
                message: "already attached".into(),
            })),
            FromHarness::Skill(s) => {
                if let Some(r) = self.goals.send(&self.client, s.id, s.goal) {
                    a.conn.send(&r);
                }
            }
            FromHarness::Cancel(c) => self.goals.cancel(&self.client, c.id, "the harness asked"),
            FromHarness::Beat(b) => {
                a.beats += 1;
                self.heartbeat.publish(Heartbeat {
                    stamp: acres_ros::node::stamp(acres_ros::node::wall_s()),
                    seq: b.n,
                    sender: "acres_bridge".into(),
                });
            }
            FromHarness::Ping(p) => a.conn.send(&FromBridge::Pong(link::Pong { n: p.n, t_s: now })),
            FromHarness::End(e) => {
                info!(cause = %e.cause, "the harness ends");
                self.detach("the harness sent end");
            }
        }
    }

    /// Drops the harness: cancels every goal it sent (their terminal states are logged as they
    /// come).
    fn detach(&mut self, why: &str) {
        if let Some(a) = self.conn.take() {
            info!(
                why,
                beats = a.beats,
                steps = a.seq,
                dropped_sweeps = self.sweeps.dropped(),
                "harness detached"
            );
            a.conn.close(Duration::from_millis(200));
        }
        self.goals.cancel(&self.client, None, why);
    }

    /// Takes the vehicle's topics; true when any came.
    fn read_ros(&mut self) -> bool {
        let mut busy = false;
        if let Some(t) = self.truth.latest() {
            self.truth_seen = Some(Instant::now());
            if let Some(a) = &mut self.conn {
                a.truth = Some(t);
            }
            busy = true;
        }
        while let Some(e) = self.events.take() {
            busy = true;
            if let Some(a) = &mut self.conn {
                a.events.push(e);
            }
        }
        // The observations first (small lines), then the newest sweep in its own line: the
        // harness pairs the two by their stamps, whichever comes first.
        while let Some(o) = self.observation.take() {
            busy = true;
            if let Some(a) = &mut self.conn {
                a.step(o, self.sweeps.dropped());
            }
        }
        let (mut newest, mut skipped) = (None, 0);
        while let Some(pc) = self.points.take() {
            busy = true;
            skipped += u64::from(newest.replace(pc).is_some());
        }
        if let Some(pc) = newest {
            if let Some(a) = &mut self.conn {
                self.sweeps.put(&pc, skipped);
                a.send_sweep(&mut self.sweeps);
            }
        }
        busy
    }
}

impl Attached {
    /// The step of an observation; `dropped_sweeps`: the sweeps dropped so far.
    fn step(&mut self, observation: Observation, dropped_sweeps: u64) {
        self.seq += 1;
        let step = link::Step {
            seq: self.seq,
            observation,
            events: std::mem::take(&mut self.events),
            truth: self.truth.take(),
            dropped_sweeps,
        };
        self.conn.send(&FromBridge::Step(step));
    }

    /// Sends the waiting sweep in its own line when a sweep could go at once (none queued or
    /// being written, little queued before it); true when one went.
    fn send_sweep(&mut self, sweeps: &mut sweeps::Sweeps) -> bool {
        if !sweeps.waiting() || !self.conn.sweep_free() {
            return false;
        }
        let Some(sweep) = sweeps.take() else { return false };
        self.conn.send_line(link::encode_sweep(&sweep), true);
        true
    }
}

/// Refuses a connection and closes it; the loop waits at most 50 ms for the refusal to go.
fn refuse(conn: &Conn, code: RefusedCode, reason: String) {
    conn.send(&FromBridge::Refused(link::Refused { code, reason }));
    conn.close(Duration::from_millis(50));
}
