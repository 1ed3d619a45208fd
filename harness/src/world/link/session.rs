//! The harness's end of one link: the TLS handshake (the bridge's certificate pinned by its
//! fingerprint) or a plaintext socket, the attach (the challenge–response of
//! `acres_link_protocol::auth`: the harness proves it knows the token and checks the bridge's
//! proof in `welcome`; the token never travels; the sweeps' encoding is chosen there among those
//! the bridge offers), a reader thread (lines in; pongs answered here so that a busy planner
//! cannot delay them; each `sweep` line is unpacked and turned into its scan here, off the
//! loop's thread), a keeper thread (a `beat` every 0.2 s, a `ping` with
//! each beat while none is outstanding, the loss checks) and the counts. Whatever the planner does, the keeper beats.
//!
//! Every line from the bridge is read with the bridge's own bound
//! ([`MAX_LINE_BYTES`](acres_link_protocol::MAX_LINE_BYTES), [`link::read_bounded`]): a longer
//! one is dropped and counted, never kept; `hello` and `welcome` must come whole within
//! [`HANDSHAKE_WAIT`]. A bridge of another protocol version is refused naming both versions,
//! and with a token a bridge that asks for none is refused (a downgrade): nothing is sent to it
//! but the attach's absence.
//!
//! The link is lost when the socket closes, when a ping gets no pong in
//! [`PONG_TIMEOUT_S`](acres_link_protocol::PONG_TIMEOUT_S), or when no `step` comes for the
//! silence limit; the first cause is kept.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acres_link_protocol as link;
use acres_vehicle::scan::{Scan, ScanConfig};
use link::tls::{Sealer, TlsError};
use link::{FromBridge, FromHarness};

use super::LinkOptions;
use crate::world::LossCause;

/// How often a ping goes (with a beat, one outstanding at a time), s: a link that stops
/// answering is found between `PONG_TIMEOUT_S` and `PONG_TIMEOUT_S` + this.
const PING_PERIOD_S: f64 = 0.2;

/// How long the bridge's `hello`, then its `welcome`, may take to come whole.
pub const HANDSHAKE_WAIT: Duration = Duration::from_secs(10);

/// Counts of the link, both ways.
#[derive(Debug, Default)]
pub struct Counts {
    /// Lines sent.
    pub sent: AtomicU64,
    /// Bytes sent.
    pub bytes_sent: AtomicU64,
    /// Lines received.
    pub received: AtomicU64,
    /// Bytes received.
    pub bytes_received: AtomicU64,
    /// The newest ping round trip, µs (0: none yet).
    pub rtt_us: AtomicU64,
    /// Lines from the bridge longer than the limit, dropped.
    pub oversized: AtomicU64,
    /// Lines from the bridge that could not be read, dropped (the oversized ones included).
    pub unreadable: AtomicU64,
}

/// The sending side of the socket: lines sealed into TLS records on a TLS link.
struct Writer {
    stream: TcpStream,
    sealer: Option<Sealer>,
}

impl Writer {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        match &self.sealer {
            Some(s) => self.stream.write_all(&s.seal(line)),
            None => self.stream.write_all(line),
        }
    }
}

/// What the threads share.
pub struct Shared {
    writer: Mutex<Writer>,
    /// Counts.
    pub counts: Counts,
    lost: Mutex<Option<LossCause>>,
    stop: AtomicBool,
    last_step: Mutex<Instant>,
    ping: Mutex<Option<(u64, Instant)>>,
    /// How late the steps come (their observation's stamp against the receive time).
    pub lateness: Mutex<super::lateness::Lateness>,
    /// The bridge's hello.
    pub hello: link::Hello,
}

impl Shared {
    /// Sends one message; a failed write loses the link.
    pub fn send(&self, m: &FromHarness) {
        let line = link::encode(m);
        let ok = self.writer.lock().expect("writer lock").write_line(line.as_bytes()).is_ok();
        self.counts.sent.fetch_add(1, Ordering::Relaxed);
        self.counts.bytes_sent.fetch_add(line.len() as u64, Ordering::Relaxed);
        if !ok {
            self.lose(LossCause::WriteFailed);
        }
    }

    /// Marks the link lost (the first cause stays) and closes the socket.
    pub fn lose(&self, cause: LossCause) {
        let mut l = self.lost.lock().expect("lost lock");
        if l.is_none() {
            *l = Some(cause);
        }
        drop(l);
        if let Ok(w) = self.writer.lock() {
            let _ = w.stream.shutdown(Shutdown::Both);
        }
    }

    /// Why the link was lost, if it was.
    pub fn lost(&self) -> Option<LossCause> {
        self.lost.lock().expect("lost lock").clone()
    }

    /// Seconds since the last step came.
    pub fn step_age_s(&self) -> f64 {
        self.last_step.lock().expect("step lock").elapsed().as_secs_f64()
    }
}

/// A message from the bridge (not a pong), as the reader thread hands it over.
#[derive(Debug)]
pub struct Received {
    /// The message.
    pub msg: FromBridge,
    /// The scan of a `sweep` line (the vehicle's scan function), made on the reader thread (its
    /// data is dropped from `msg` once unpacked).
    pub scan: Option<Scan>,
    /// The sweep's points (sensor frame), for the recording.
    pub points: Option<Vec<[f32; 4]>>,
    /// When the reader thread had the message decoded and its scan made: wall clock, s since
    /// the UNIX epoch (the clock of ROS stamps on one machine; latency figures).
    pub at_wall_s: f64,
}

/// An attached link.
pub struct Session {
    /// What the threads share.
    pub shared: Arc<Shared>,
    /// Messages from the bridge other than pongs.
    pub rx: Receiver<Received>,
    keeper: Option<std::thread::JoinHandle<()>>,
}

/// Why a link could not be attached.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// No connection.
    #[error("cannot connect to the bridge at {addr}: {why}")]
    Connect {
        /// host:port.
        addr: String,
        /// The last error.
        why: String,
    },
    /// The TLS handshake failed (a certificate that is not pinned, a bridge without TLS).
    #[error("{0}")]
    Tls(#[from] TlsError),
    /// The bridge's welcome does not prove that it knows the token.
    #[error("the bridge's welcome does not prove that it knows the token (a wrong token on the bridge, or not our bridge): the link is closed, nothing was sent")]
    BridgeProof,
    /// The bridge refused the attach.
    #[error("the bridge refused the link ({code:?}): {reason}")]
    Refused {
        /// Why.
        code: link::RefusedCode,
        /// In words.
        reason: String,
    },
    /// The bridge speaks another protocol version.
    #[error("{0}")]
    Version(String),
    /// A token is set and the bridge asks for none: it cannot prove that it knows it.
    #[error("the bridge asks for no token but one is set (ACRES_LINK_TOKEN or --link-token): it cannot prove that it knows it, so it is not commanded (a downgrade); set the same token on the bridge")]
    Downgrade,
    /// Something else went wrong in the handshake.
    #[error("link handshake: {0}")]
    Handshake(String),
}

/// A TCP connection to `o.host`:`o.port`, tried again every 50 ms until `connect_timeout`.
fn connect(o: &LinkOptions, connect_timeout: Duration) -> Result<TcpStream, AttachError> {
    let addr = format!("{}:{}", o.host, o.port);
    let deadline = Instant::now() + connect_timeout;
    loop {
        let tried = addr
            .to_socket_addrs()
            .map_err(|e| e.to_string())
            .and_then(|mut a| a.next().ok_or_else(|| "no address".to_string()))
            .and_then(|a| TcpStream::connect_timeout(&a, Duration::from_secs(2)).map_err(|e| e.to_string()));
        match tried {
            Ok(s) => return Ok(s),
            Err(why) if Instant::now() >= deadline => return Err(AttachError::Connect { addr, why }),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// The bridge's `hello` checked against what this harness asks: the version, no downgrade (a
/// token set and none asked), the sweep encoding offered, a valid nonce when proving a token.
fn check_hello(hello: &link::Hello, o: &LinkOptions) -> Result<(), AttachError> {
    if hello.version != link::PROTOCOL_VERSION {
        return Err(AttachError::Version(version_mismatch(hello.version)));
    }
    if o.token.is_some() && !hello.token_required {
        return Err(AttachError::Downgrade);
    }
    if !hello.sweep_encodings.contains(&o.sweep_encoding) {
        return Err(AttachError::Handshake(format!(
            "the bridge does not offer the sweep encoding {} (it offers {}): choose one of those with --link-sweeps",
            o.sweep_encoding,
            hello.sweep_encodings.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    if o.token.is_some() && !link::auth::nonce_ok(&hello.nonce) {
        return Err(AttachError::Handshake("the bridge's hello has no valid nonce".into()));
    }
    Ok(())
}

impl Session {
    /// Connects to `o.host`:`o.port` (retrying until `connect_timeout`), runs the TLS handshake
    /// pinning `o.pins` (the certificates' SHA-256 fingerprints; none: plaintext), reads
    /// `hello`, attaches proving `o.token` and asking for `o.sweep_encoding`; the reader thread
    /// scans each sweep with `scan_cfg` (the scenario's LiDAR mount).
    pub fn attach(
        o: &LinkOptions,
        connect_timeout: Duration,
        scan_cfg: ScanConfig,
    ) -> Result<Session, AttachError> {
        let (token, pins, silent_s) = (o.token.as_deref(), &o.pins[..], o.silent_s);
        let stream = connect(o, connect_timeout)?;
        let hs = |e: std::io::Error| AttachError::Handshake(e.to_string());
        stream.set_nodelay(true).map_err(hs)?;
        // Room for a few sweep steps at once (autotuning would grow it only after some traffic).
        let _ = socket2::SockRef::from(&stream).set_recv_buffer_size(link::SOCKET_BUFFER_BYTES);
        let (stream, source, sealer): (TcpStream, Box<dyn Read + Send>, Option<Sealer>) = if pins.is_empty() {
            let r = stream.try_clone().map_err(hs)?;
            (stream, Box::new(r), None)
        } else {
            let (s, r, seal) = link::tls::client_handshake(stream, pins, Duration::from_secs(5))?;
            (s, Box::new(r), Some(seal))
        };
        let binding = sealer.as_ref().map_or_else(Vec::new, |s| s.binding().to_vec());
        let mut writer = Writer { stream, sealer };
        let mut reader = BufReader::with_capacity(1 << 20, source);
        writer.stream.set_read_timeout(Some(Duration::from_secs(5))).map_err(hs)?;
        let hello = match read_handshake(&mut reader, "hello")? {
            FromBridge::Hello(h) => h,
            FromBridge::Refused(r) => return Err(AttachError::Refused { code: r.code, reason: r.reason }),
            other => return Err(AttachError::Handshake(format!("expected hello, got {}", kind(&other)))),
        };
        let nonce = link::auth::new_nonce();
        if let Err(e) = check_hello(&hello, o) {
            if matches!(e, AttachError::Downgrade) {
                let _ = writer.stream.shutdown(Shutdown::Both);
            }
            return Err(e);
        }
        let attach = FromHarness::Attach(link::Attach {
            version: link::PROTOCOL_VERSION,
            harness: format!("acres-harness {}", crate::HARNESS_VERSION),
            proof: token.map(|t| link::auth::attach_proof(t, &hello.nonce, &nonce, &binding)),
            nonce: nonce.clone(),
            sweep_encoding: o.sweep_encoding,
        });
        writer.write_line(link::encode(&attach).as_bytes()).map_err(hs)?;
        match read_handshake(&mut reader, "welcome")? {
            FromBridge::Welcome(w) => {
                if let Some(t) = token {
                    let proved = w.proof.as_deref().is_some_and(|p| {
                        link::auth::welcome_proof_matches(p, t, &hello.nonce, &nonce, &binding)
                    });
                    if !proved {
                        let _ = writer.stream.shutdown(Shutdown::Both);
                        return Err(AttachError::BridgeProof);
                    }
                }
            }
            FromBridge::Refused(r) => return Err(AttachError::Refused { code: r.code, reason: r.reason }),
            other => return Err(AttachError::Handshake(format!("expected welcome, got {}", kind(&other)))),
        }
        writer.stream.set_read_timeout(None).map_err(hs)?;
        let shared = Arc::new(Shared {
            writer: Mutex::new(writer),
            counts: Counts::default(),
            lost: Mutex::new(None),
            stop: AtomicBool::new(false),
            // The first step may take DDS discovery: a grace of 5 s before the silence counts.
            last_step: Mutex::new(Instant::now() + Duration::from_secs(5)),
            ping: Mutex::new(None),
            lateness: Mutex::new(Default::default()),
            hello,
        });
        let (tx, rx) = channel();
        let sh = shared.clone();
        std::thread::Builder::new()
            .name("link-read".into())
            .spawn(move || read_loop(&sh, reader, &tx, &scan_cfg))
            .map_err(hs)?;
        let sh = shared.clone();
        let keeper = std::thread::Builder::new()
            .name("link-keeper".into())
            .spawn(move || keep(&sh, silent_s))
            .map_err(hs)?;
        Ok(Session { shared, rx, keeper: Some(keeper) })
    }

    /// Sends `end`, stops the keeper and closes the socket.
    pub fn end(&mut self, cause: &str) {
        if self.shared.lost().is_none() {
            self.shared.send(&FromHarness::End(link::End { cause: cause.into() }));
        }
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(k) = self.keeper.take() {
            let _ = k.join();
        }
        if let Ok(w) = self.shared.writer.lock() {
            let _ = w.stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Ok(w) = self.shared.writer.lock() {
            let _ = w.stream.shutdown(Shutdown::Both);
        }
    }
}

/// The refusal of a bridge of protocol version `bridge`, naming both versions.
fn version_mismatch(bridge: u32) -> String {
    link::version_mismatch(bridge, link::PROTOCOL_VERSION)
        + ": use a harness and a bridge of the same release"
}

/// A message's type, for errors (never its content: a hostile bridge's line may be huge).
fn kind(m: &FromBridge) -> &'static str {
    match m {
        FromBridge::Hello(_) => "hello",
        FromBridge::Welcome(_) => "welcome",
        FromBridge::Refused(_) => "refused",
        FromBridge::Step(_) => "step",
        FromBridge::Sweep(_) => "sweep",
        FromBridge::Reply(_) => "reply",
        FromBridge::Result(_) => "result",
        FromBridge::Pong(_) => "pong",
        FromBridge::Error(_) => "error",
    }
}

/// One handshake line (`what`: the one expected), whole within [`HANDSHAKE_WAIT`] and at most
/// [`link::MAX_LINE_BYTES`]; a line of another version is told as such.
fn read_handshake(r: &mut impl BufRead, what: &str) -> Result<FromBridge, AttachError> {
    let deadline = Instant::now() + HANDSHAKE_WAIT;
    let hs = |why: String| AttachError::Handshake(format!("expected {what}: {why}"));
    // At most one line's worth: a handshake line past the limit ends the handshake at once.
    let mut within = r.take(link::MAX_LINE_BYTES as u64 + 2);
    let line = match link::read_bounded(&mut within, link::MAX_LINE_BYTES, Some(deadline)) {
        Ok(link::BoundedLine::Line(l)) => l,
        Ok(link::BoundedLine::Oversized(_)) => {
            return Err(hs(format!(
                "the bridge sent a line longer than the {} bytes a line may have",
                link::MAX_LINE_BYTES
            )))
        }
        Ok(link::BoundedLine::End) => return Err(hs("the bridge closed the connection".into())),
        Ok(link::BoundedLine::Cut(n)) => {
            return Err(hs(format!("the bridge closed the connection inside a line ({n} bytes of it came)")))
        }
        Err(e) if matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock) => {
            return Err(hs(format!("no whole line within {} s", HANDSHAKE_WAIT.as_secs())))
        }
        Err(e) => return Err(hs(e.to_string())),
    };
    let text = String::from_utf8(line).map_err(|_| hs("the line is not UTF-8".into()))?;
    match link::decode::<FromBridge>(&text) {
        Ok(m) => Ok(m),
        Err(e) => {
            // A hello of another version may not read as ours: its version still tells why.
            let v: Option<u64> = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .filter(|v| v["type"] == "hello")
                .and_then(|v| v["version"].as_u64());
            match v {
                Some(v) if v != u64::from(link::PROTOCOL_VERSION) => {
                    Err(AttachError::Version(version_mismatch(u32::try_from(v).unwrap_or(u32::MAX))))
                }
                _ => Err(hs(e.to_string())),
            }
        }
    }
}

fn read_loop(
    sh: &Shared,
    mut r: BufReader<Box<dyn Read + Send>>,
    tx: &Sender<Received>,
    scan_cfg: &ScanConfig,
) {
    loop {
        let line = match link::read_bounded(&mut r, link::MAX_LINE_BYTES, None) {
            Ok(link::BoundedLine::Line(l)) => l,
            Ok(link::BoundedLine::Oversized(n)) => {
                sh.counts.oversized.fetch_add(1, Ordering::Relaxed);
                sh.counts.unreadable.fetch_add(1, Ordering::Relaxed);
                sh.counts.bytes_received.fetch_add(n as u64, Ordering::Relaxed);
                eprintln!(
                    "acres-harness: link: a line of {n} bytes from the bridge, more than the {} a line may have: dropped",
                    link::MAX_LINE_BYTES
                );
                continue;
            }
            // A line cut by the end of the stream is the bridge closing mid-line (a session that
            // ended while a sweep was on its way), not an unreadable line: the link's end.
            Ok(link::BoundedLine::End | link::BoundedLine::Cut(_)) | Err(_) => {
                if !sh.stop.load(Ordering::Relaxed) {
                    sh.lose(LossCause::SocketClosed);
                }
                return;
            }
        };
        sh.counts.received.fetch_add(1, Ordering::Relaxed);
        sh.counts.bytes_received.fetch_add(line.len() as u64, Ordering::Relaxed);
        let Ok(line) = String::from_utf8(line) else {
            sh.counts.unreadable.fetch_add(1, Ordering::Relaxed);
            eprintln!("acres-harness: link: a line from the bridge is not UTF-8: dropped");
            continue;
        };
        match link::decode::<FromBridge>(&line) {
            Ok(FromBridge::Pong(p)) => {
                let mut ping = sh.ping.lock().expect("ping lock");
                if let Some((n, at)) = *ping {
                    if n == p.n {
                        sh.counts.rtt_us.store(at.elapsed().as_micros() as u64, Ordering::Relaxed);
                        *ping = None;
                    }
                }
            }
            Ok(mut msg) => {
                let sweep = match &mut msg {
                    FromBridge::Step(_) => {
                        *sh.last_step.lock().expect("step lock") = Instant::now();
                        None
                    }
                    FromBridge::Sweep(sw) => {
                        let seen = super::convert::sweep_of(sw, scan_cfg);
                        match &seen {
                            Some(_) => sw.data = String::new(),
                            None => {
                                sh.counts.unreadable.fetch_add(1, Ordering::Relaxed);
                                eprintln!(
                                    "acres-harness: link: a sweep's data does not hold its {} points ({}): dropped",
                                    sw.points, sw.encoding
                                );
                            }
                        }
                        seen
                    }
                    _ => None,
                };
                let (scan, points) = sweep.map_or((None, None), |(s, p)| (Some(s), Some(p)));
                let at_wall_s = crate::clock::wall_now();
                if let FromBridge::Step(s) = &msg {
                    let stamp_s = super::convert::secs(&s.observation.header.stamp);
                    sh.lateness.lock().expect("lateness lock").on_step(stamp_s, at_wall_s);
                }
                if tx.send(Received { msg, scan, points, at_wall_s }).is_err() {
                    return;
                }
            }
            Err(e) => {
                sh.counts.unreadable.fetch_add(1, Ordering::Relaxed);
                eprintln!("acres-harness: link: unreadable line from the bridge: {e}");
            }
        }
    }
}

/// Beats every 0.2 s, pings (one outstanding at a time), and watches for a missing pong or silence.
fn keep(sh: &Shared, silent_s: f64) {
    let beat = Duration::from_secs_f64(link::BEAT_PERIOD_S);
    let start = Instant::now();
    let (mut beats, mut pings) = (0u64, 0u64);
    let mut next_ping = start;
    while !sh.stop.load(Ordering::Relaxed) && sh.lost().is_none() {
        beats += 1;
        sh.send(&FromHarness::Beat(link::Beat { n: beats }));
        let now = Instant::now();
        if now >= next_ping {
            let mut ping = sh.ping.lock().expect("ping lock");
            if ping.is_none() {
                pings += 1;
                *ping = Some((pings, now));
                drop(ping);
                sh.send(&FromHarness::Ping(link::Ping { n: pings }));
            }
            next_ping = now + Duration::from_secs_f64(PING_PERIOD_S);
        }
        // Sleep to the next beat in short slices, checking the pong and the silence.
        let due = start + beat * (beats as u32);
        loop {
            if sh.stop.load(Ordering::Relaxed) {
                return;
            }
            let outstanding = *sh.ping.lock().expect("ping lock");
            if let Some((n, at)) = outstanding {
                if at.elapsed().as_secs_f64() > link::PONG_TIMEOUT_S {
                    sh.lose(LossCause::NoPong { ping: n });
                    return;
                }
            }
            let age = sh.step_age_s();
            if age > silent_s {
                sh.lose(LossCause::Silent { silent_s });
                return;
            }
            let now = Instant::now();
            if now >= due {
                break;
            }
            std::thread::sleep((due - now).min(Duration::from_millis(10)));
        }
    }
}
