//! The link's security on the bridge's side: its TLS identity (made or loaded, its fingerprint
//! logged and written for the harness to pin), the handshake of each new connection on a
//! thread of its own (a slow or hostile client never stalls the loop), the refusal of a
//! plaintext client by a TLS bridge, the harness nonces already used (a replayed attach), and
//! the wrong proofs of each peer address (each one delays that peer's next check).

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::net::{IpAddr, TcpStream};
use std::path::Path;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acres_link_protocol::tls::{self, Identity, Sealer, ServerConfig, TlsReader};
use acres_link_protocol::{encode, FromBridge, Refused, RefusedCode};
use acres_ros::Wake;
use tracing::{info, warn};

/// How long a TLS bridge waits for a client's first byte before it tells it, in plaintext,
/// that the bridge speaks TLS only.
pub const FIRST_BYTE_WAIT: Duration = Duration::from_secs(1);

/// How many harness nonces the bridge remembers.
pub const NONCES_KEPT: usize = 4096;

/// A connection ready for the link: its socket and, with TLS, its session's halves.
pub struct Accepted {
    /// The socket.
    pub stream: TcpStream,
    /// The TLS session's halves (TLS links).
    pub tls: Option<(TlsReader, Sealer)>,
    /// The peer, for logs.
    pub peer: String,
    /// The connection's number (the one [`Security::accept`] was given).
    pub id: u64,
}

/// What a handshake thread hands back: the connection's number and, when it succeeded, the
/// connection.
pub type Handshaken = (u64, Option<Accepted>);

/// The bridge's TLS side.
pub struct Security {
    config: Option<Arc<ServerConfig>>,
}

impl Security {
    /// TLS with the identity of `identity_file` (made there when missing; in memory when
    /// empty); logs the fingerprint and writes it to `fingerprint_file` when set. `None`: no TLS.
    pub fn new(tls_on: bool, identity_file: &str, fingerprint_file: &str) -> anyhow::Result<Security> {
        if !tls_on {
            warn!("the link is plaintext (tls:=false): commands and observations travel in clear");
            return Ok(Security { config: None });
        }
        let id = if identity_file.is_empty() {
            Identity::generate()?
        } else {
            Identity::load_or_make(Path::new(identity_file))?
        };
        let fp = id.fingerprint();
        info!("link TLS certificate fingerprint: sha256:{fp}");
        if !fingerprint_file.is_empty() {
            std::fs::write(fingerprint_file, format!("sha256:{fp}\n"))
                .map_err(|e| anyhow::anyhow!("writing the fingerprint to {fingerprint_file}: {e}"))?;
        }
        Ok(Security { config: Some(id.server_config()?) })
    }

    /// Whether the link speaks TLS.
    pub fn tls(&self) -> bool {
        self.config.is_some()
    }

    /// Takes new connection `id`: without TLS hands it over at once; with TLS runs the
    /// handshake on a thread (each of its steps waits at most `timeout`; the loop also shuts
    /// the socket at the attach deadline) and hands back the outcome (`wake` wakes the loop).
    pub fn accept(
        &self,
        stream: TcpStream,
        peer: String,
        id: u64,
        timeout: Duration,
        tx: &Sender<Handshaken>,
        wake: Wake,
    ) {
        let Some(config) = self.config.clone() else {
            let _ = tx.send((id, Some(Accepted { stream, tls: None, peer, id })));
            return wake.wake();
        };
        let to_loop = tx.clone();
        let spawned = std::thread::Builder::new().name("link-tls".into()).spawn(move || {
            let a = handshake(stream, peer, id, config, timeout);
            if to_loop.send((id, a)).is_ok() {
                wake.wake();
            }
        });
        if let Err(e) = spawned {
            warn!(error = %e, "no thread for a TLS handshake");
            let _ = tx.send((id, None));
        }
    }
}

fn handshake(
    stream: TcpStream,
    peer: String,
    id: u64,
    config: Arc<ServerConfig>,
    timeout: Duration,
) -> Option<Accepted> {
    if stream.set_nonblocking(false).is_err() || stream.set_read_timeout(Some(FIRST_BYTE_WAIT)).is_err() {
        return None;
    }
    let mut first = [0u8; 1];
    let tls_client = matches!(stream.peek(&mut first), Ok(1) if tls::looks_like_tls(first[0]));
    if !tls_client {
        info!(%peer, "plaintext client refused: this bridge speaks TLS only");
        let line = encode(&FromBridge::Refused(Refused {
            code: RefusedCode::Tls,
            reason:
                "this bridge speaks TLS only: pin its certificate with --link-fingerprint or --link-trust"
                    .into(),
        }));
        let mut s = &stream;
        let _ = s.write_all(line.as_bytes());
        let _ = stream.shutdown(std::net::Shutdown::Both);
        return None;
    }
    match tls::server_handshake(stream, config, timeout) {
        Ok((stream, r, s)) => Some(Accepted { stream, tls: Some((r, s)), peer, id }),
        Err(e) => {
            warn!(%peer, "link TLS handshake refused: {e}");
            None
        }
    }
}

/// The harness nonces used so far (the newest [`NONCES_KEPT`]).
#[derive(Default)]
pub struct Nonces {
    order: VecDeque<String>,
    seen: HashSet<String>,
}

impl Nonces {
    /// Records `n`; false when it was seen before (a replay).
    pub fn fresh(&mut self, n: &str) -> bool {
        if !self.seen.insert(n.to_string()) {
            return false;
        }
        self.order.push_back(n.to_string());
        if self.order.len() > NONCES_KEPT {
            if let Some(old) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
        true
    }
}

/// The first delay after a wrong proof, s; each further one doubles it, up to
/// [`FAILURE_DELAY_MAX_S`].
pub const FAILURE_DELAY_S: f64 = 0.25;

/// The longest delay before a peer's next attach is checked, s.
pub const FAILURE_DELAY_MAX_S: f64 = 2.0;

/// A peer address without a wrong proof for this long is forgiven, s.
pub const FAILURE_FORGET_S: f64 = 60.0;

/// How many peer addresses the failures remember.
pub const FAILURES_KEPT: usize = 4096;

/// Wrong proofs by peer address: each delays that address's next attach check, by a delay
/// that doubles with each failure (so a guesser gets at most one guess per
/// [`FAILURE_DELAY_MAX_S`] from one address, whatever the number of its connections).
#[derive(Default)]
pub struct Failures {
    by_ip: HashMap<IpAddr, (u32, Instant)>,
}

impl Failures {
    /// Records a wrong proof from `ip`; its count of failures.
    pub fn fail(&mut self, ip: IpAddr, now: Instant) -> u32 {
        if self.by_ip.len() >= FAILURES_KEPT {
            self.by_ip.retain(|_, (_, at)| now.duration_since(*at).as_secs_f64() < FAILURE_FORGET_S);
        }
        if self.by_ip.len() >= FAILURES_KEPT && !self.by_ip.contains_key(&ip) {
            // Full of recent failures: the oldest is forgotten.
            if let Some(old) = self.by_ip.iter().min_by_key(|(_, (_, at))| *at).map(|(k, _)| *k) {
                self.by_ip.remove(&old);
            }
        }
        let e = self.by_ip.entry(ip).or_insert((0, now));
        if now.duration_since(e.1).as_secs_f64() >= FAILURE_FORGET_S {
            e.0 = 0;
        }
        e.0 += 1;
        e.1 = now;
        e.0
    }

    /// When the next attach of `ip` may be checked (`None`: at once).
    pub fn not_before(&self, ip: IpAddr) -> Option<Instant> {
        let (n, at) = self.by_ip.get(&ip)?;
        let delay =
            (FAILURE_DELAY_S * 2f64.powi(n.saturating_sub(1).min(16) as i32)).min(FAILURE_DELAY_MAX_S);
        Some(*at + Duration::from_secs_f64(delay))
    }

    /// Forgets `ip`'s failures (it attached with a valid proof).
    pub fn forgive(&mut self, ip: IpAddr) {
        self.by_ip.remove(&ip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_proofs_delay_the_peer_more_each_time_up_to_the_cap() {
        let mut f = Failures::default();
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        let other: IpAddr = "192.0.2.8".parse().unwrap();
        let t0 = Instant::now();
        assert!(f.not_before(ip).is_none());
        let delays: Vec<f64> = (0..6)
            .map(|_| {
                f.fail(ip, t0);
                f.not_before(ip).unwrap().duration_since(t0).as_secs_f64()
            })
            .collect();
        assert_eq!(delays, vec![0.25, 0.5, 1.0, 2.0, 2.0, 2.0]);
        assert!(f.not_before(other).is_none(), "another peer is not delayed");
        // Forgotten after FAILURE_FORGET_S: the count starts again.
        let later = t0 + Duration::from_secs_f64(FAILURE_FORGET_S + 1.0);
        assert_eq!(f.fail(ip, later), 1);
        f.forgive(ip);
        assert!(f.not_before(ip).is_none());
    }

    #[test]
    fn the_failures_stay_bounded() {
        let mut f = Failures::default();
        let t0 = Instant::now();
        for i in 0..(FAILURES_KEPT as u32 + 100) {
            f.fail(IpAddr::from(i.to_be_bytes()), t0 + Duration::from_millis(u64::from(i)));
        }
        assert_eq!(f.by_ip.len(), FAILURES_KEPT);
    }
}
