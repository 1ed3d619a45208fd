//! Connections before the slot: a new connection is pending from its TCP accept (its TLS
//! handshake on a thread of its own, then `hello` and the wait for an `attach`) until it
//! attaches with a valid proof (or, without a token, a valid `attach`), and only then may it
//! take the commander slot. A pending connection has `attach_timeout_s` from its accept; at most
//! [`PENDING_MAX`] are pending (handshakes included), and a new one drops the oldest. So a
//! silent or dripping client never holds the slot, and a real harness never waits behind one.
//!
//! A valid attach while another harness is attached gets `busy`. A wrong proof is logged with
//! the peer (never the token) and delays that peer address's next attach check
//! ([`secure::Failures`]); an attach waiting out that delay no longer counts against the attach
//! deadline, but still against the cap.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use acres_link_protocol as link;
use link::{FromBridge, FromHarness, RefusedCode};
use tracing::{debug, info, warn};

use crate::conn::{Conn, Incoming};
use crate::{refuse, secure, Attached, Bridge};

/// The most connections pending at once (in their TLS handshake or waiting for an attach); a
/// new one drops the oldest.
pub const PENDING_MAX: usize = 16;

/// The most lines of one pending connection handled in one turn of the loop.
const LINES_A_TURN: usize = 32;

/// A connection in its TLS handshake: a clone of its socket, to shut it at the deadline.
struct Handshaking {
    id: u64,
    since: Instant,
    peer: String,
    socket: std::net::TcpStream,
}

/// A connection waiting for its attach.
struct Waiting {
    conn: Conn,
    /// The bridge's nonce of this connection (in `hello`).
    nonce: String,
    ip: Option<IpAddr>,
    since: Instant,
    /// An attach that waits for its peer's delay after wrong proofs.
    deferred: Option<link::Attach>,
}

/// The pending connections.
#[derive(Default)]
pub struct Queue {
    next_id: u64,
    handshaking: Vec<Handshaking>,
    waiting: Vec<Waiting>,
}

impl Queue {
    fn len(&self) -> usize {
        self.handshaking.len() + self.waiting.len()
    }

    /// Drops the oldest pending connection.
    fn drop_oldest(&mut self) {
        let h = self.handshaking.iter().enumerate().min_by_key(|(_, h)| h.since).map(|(i, h)| (i, h.since));
        let w = self.waiting.iter().enumerate().min_by_key(|(_, w)| w.since).map(|(i, w)| (i, w.since));
        match (h, w) {
            (Some((i, hs)), Some((_, ws))) if hs <= ws => self.drop_handshake(i),
            (Some((i, _)), None) => self.drop_handshake(i),
            (_, Some((i, _))) => {
                let w = self.waiting.remove(i);
                info!(peer = %w.conn.peer, "pending connection dropped: too many pending");
                refuse(&w.conn, RefusedCode::Protocol, "too many connections are waiting to attach".into());
            }
            (None, None) => {}
        }
    }

    fn drop_handshake(&mut self, i: usize) {
        let h = self.handshaking.remove(i);
        info!(peer = %h.peer, "pending TLS handshake dropped: too many pending");
        let _ = h.socket.shutdown(std::net::Shutdown::Both);
    }
}

fn ip_of(peer: &str) -> Option<IpAddr> {
    peer.parse::<std::net::SocketAddr>().ok().map(|a| a.ip())
}

impl Bridge {
    fn attach_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.params.attach_timeout_s)
    }

    /// New connections, finished handshakes, pending lines and deadlines; true when something
    /// was done.
    pub(crate) fn take_connections(&mut self) -> bool {
        let mut busy = false;
        while let Ok((s, peer)) = self.listener.accept() {
            busy = true;
            while self.pending.len() >= PENDING_MAX {
                self.pending.drop_oldest();
            }
            let id = self.pending.next_id;
            self.pending.next_id += 1;
            let Ok(socket) = s.try_clone() else { continue };
            let peer = peer.to_string();
            self.pending.handshaking.push(Handshaking {
                id,
                since: Instant::now(),
                peer: peer.clone(),
                socket,
            });
            // The loop closes it at the attach deadline; the handshake's own wait is a backstop.
            let timeout = self.attach_timeout() * 2;
            self.security.accept(s, peer, id, timeout, &self.accepted_tx, self.waiter.wake_handle());
        }
        while let Ok((id, a)) = self.accepted.try_recv() {
            busy = true;
            let Some(i) = self.pending.handshaking.iter().position(|h| h.id == id) else { continue };
            let h = self.pending.handshaking.remove(i);
            if let Some(a) = a {
                self.start_pending(a, h.since);
            }
        }
        busy |= self.read_pending();
        self.expire();
        busy
    }

    fn start_pending(&mut self, a: secure::Accepted, since: Instant) {
        let peer = a.peer;
        let conn = match Conn::start(a.stream, a.tls, self.waiter.wake_handle()) {
            Ok(c) => c,
            Err(e) => return warn!(%peer, error = %e, "connection failed"),
        };
        let nonce = link::auth::new_nonce();
        conn.send(&FromBridge::Hello(self.hello(&nonce)));
        debug!(%peer, "connection waits for its attach");
        self.pending.waiting.push(Waiting { ip: ip_of(&peer), conn, nonce, since, deferred: None });
    }

    /// Closes the pending connections past their deadline.
    fn expire(&mut self) {
        let timeout = self.attach_timeout();
        let now = Instant::now();
        self.pending.handshaking.retain(|h| {
            let alive = now.duration_since(h.since) < timeout;
            if !alive {
                info!(peer = %h.peer, "TLS handshake not done within attach_timeout_s: closed");
                let _ = h.socket.shutdown(std::net::Shutdown::Both);
            }
            alive
        });
        let (expired, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending.waiting)
            .into_iter()
            .partition(|w| w.deferred.is_none() && now.duration_since(w.since) >= timeout);
        self.pending.waiting = kept;
        for w in expired {
            info!(peer = %w.conn.peer, "no attach within attach_timeout_s: closed");
            let why =
                format!("no attach within {} s: the connection is closed", self.params.attach_timeout_s);
            refuse(&w.conn, RefusedCode::Protocol, why);
        }
    }

    /// Handles the pending connections' lines (at most [`LINES_A_TURN`] of each) and deferred
    /// attaches; true when any came.
    fn read_pending(&mut self) -> bool {
        let mut busy = false;
        let (mut i, mut n) = (0, 0);
        while i < self.pending.waiting.len() {
            if n >= LINES_A_TURN {
                (i, n) = (i + 1, 0);
                continue;
            }
            n += 1;
            let w = &mut self.pending.waiting[i];
            if let Some(at) = w.deferred.take() {
                let due = w.ip.and_then(|ip| self.failures.not_before(ip));
                if due.is_some_and(|d| Instant::now() < d) {
                    w.deferred = Some(at);
                } else {
                    busy = true;
                    let w = self.pending.waiting.remove(i);
                    self.check_attach(w, at);
                    n = 0;
                    continue;
                }
            }
            if w.deferred.is_some() {
                (i, n) = (i + 1, 0);
                continue;
            }
            let item = match w.conn.rx.try_recv() {
                Ok(item) => item,
                Err(std::sync::mpsc::TryRecvError::Empty) => {
                    (i, n) = (i + 1, 0);
                    continue;
                }
                Err(std::sync::mpsc::TryRecvError::Disconnected) => Incoming::Closed,
            };
            busy = true;
            match item {
                Incoming::Closed => {
                    debug!(peer = %w.conn.peer, "pending connection closed");
                    self.pending.waiting.remove(i);
                }
                Incoming::Line(Err(e)) => {
                    debug!(error = %e, "unreadable line");
                    w.conn
                        .send(&FromBridge::Error(link::ErrorLine { code: e.code(), message: e.to_string() }));
                }
                Incoming::Line(Ok(FromHarness::Attach(at))) => {
                    let due = w.ip.and_then(|ip| self.failures.not_before(ip));
                    if due.is_some_and(|d| Instant::now() < d) {
                        w.deferred = Some(at);
                    } else {
                        let w = self.pending.waiting.remove(i);
                        self.check_attach(w, at);
                    }
                }
                Incoming::Line(Ok(FromHarness::Skill(_) | FromHarness::Cancel(_))) => {
                    w.conn.send(&FromBridge::Error(link::ErrorLine {
                        code: link::ErrorCode::OutOfOrder,
                        message: "attach first: nothing is executed before the harness is attached".into(),
                    }))
                }
                Incoming::Line(Ok(_)) => {
                    let w = self.pending.waiting.remove(i);
                    info!(peer = %w.conn.peer, "attach refused: the first line is not an attach");
                    refuse(&w.conn, RefusedCode::Protocol, "the first line must be an attach".into());
                }
            }
        }
        busy
    }

    /// Checks an attach; attaches the connection, or refuses it.
    fn check_attach(&mut self, w: Waiting, at: link::Attach) {
        let peer = w.conn.peer.clone();
        if at.version != link::PROTOCOL_VERSION {
            let why = link::version_mismatch(link::PROTOCOL_VERSION, at.version);
            info!(%peer, "attach refused: {why}");
            return refuse(&w.conn, RefusedCode::Version, why);
        }
        let proof = match self.proof_of(&w, &at) {
            Ok(p) => p,
            Err((code, why)) => {
                if code == RefusedCode::Token {
                    let n = w.ip.map_or(0, |ip| self.failures.fail(ip, Instant::now()));
                    warn!(%peer, failures = n, "attach refused: {why}");
                } else {
                    info!(%peer, ?code, "attach refused: {why}");
                }
                return refuse(&w.conn, code, why);
            }
        };
        if let Some(ip) = w.ip {
            self.failures.forgive(ip);
        }
        // The attached harness's last lines first: an `end` or a close just before frees the slot.
        self.read_link();
        if let Some(a) = &self.conn {
            info!(%peer, attached = %a.conn.peer, "second harness refused: busy");
            return refuse(
                &w.conn,
                RefusedCode::Busy,
                "another harness is attached: one commander at a time".into(),
            );
        }
        let now = self.node.now_s();
        info!(%peer, harness = %at.harness, sweeps = %at.sweep_encoding, "harness attached");
        w.conn.send(&FromBridge::Welcome(link::Welcome { t_s: now, proof }));
        self.sweeps.reset(at.sweep_encoding);
        self.conn = Some(Attached { conn: w.conn, seq: 0, events: Vec::new(), truth: None, beats: 0 });
    }

    /// Checks an attach's nonce and proof against the token (when one is set); the welcome's
    /// proof, or why the attach is refused.
    fn proof_of(&mut self, w: &Waiting, at: &link::Attach) -> Result<Option<String>, (RefusedCode, String)> {
        let Some(token) = &self.params.token else { return Ok(None) };
        if !link::auth::nonce_ok(&at.nonce) {
            return Err((RefusedCode::Protocol, "the attach's nonce is not 64 hex characters".into()));
        }
        if !self.nonces.fresh(&at.nonce) {
            return Err((RefusedCode::Replay, "replayed attach: this harness nonce was used before".into()));
        }
        let Some(proof) = &at.proof else {
            return Err((RefusedCode::Token, "a token is required: the attach carries no proof".into()));
        };
        let binding = w.conn.binding();
        if !link::auth::attach_proof_matches(proof, token, &w.nonce, &at.nonce, binding) {
            return Err((
                RefusedCode::Token,
                "wrong token: the attach's proof does not match this connection's challenge".into(),
            ));
        }
        Ok(Some(link::auth::welcome_proof(token, &w.nonce, &at.nonce, binding)))
    }
}
