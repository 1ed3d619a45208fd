//! The link's security on the bridge's side: its TLS identity (made or loaded, its fingerprint
//! logged and written for the harness to pin), the handshake of each new connection on a
//! thread of its own (a slow or hostile client never stalls the loop), the refusal of a
//! plaintext client by a TLS bridge, and the harness nonces already used (a replayed attach).

use std::collections::{HashSet, VecDeque};
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use acres_link_protocol::tls::{self, Identity, Sealer, ServerConfig, TlsReader};
use acres_link_protocol::{encode, FromBridge, Refused, RefusedCode};
use acres_ros::Wake;
use tracing::{info, warn};

/// How long a TLS bridge waits for a client's first byte before it tells it, in plaintext,
/// that the bridge speaks TLS only.
pub const FIRST_BYTE_WAIT: Duration = Duration::from_secs(1);

/// How long each step of a TLS handshake may take.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

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
}

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

    /// Takes a new connection: without TLS hands it over at once; with TLS runs the handshake
    /// on a thread and hands it over when it succeeds (`wake` wakes the loop).
    pub fn accept(&self, stream: TcpStream, peer: String, tx: &Sender<Accepted>, wake: Wake) {
        let Some(config) = self.config.clone() else {
            let _ = tx.send(Accepted { stream, tls: None, peer });
            return wake.wake();
        };
        let tx = tx.clone();
        let spawned = std::thread::Builder::new().name("link-tls".into()).spawn(move || {
            if let Some(a) = handshake(stream, peer, config) {
                if tx.send(a).is_ok() {
                    wake.wake();
                }
            }
        });
        if let Err(e) = spawned {
            warn!(error = %e, "no thread for a TLS handshake");
        }
    }
}

fn handshake(stream: TcpStream, peer: String, config: Arc<ServerConfig>) -> Option<Accepted> {
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
    match tls::server_handshake(stream, config, HANDSHAKE_TIMEOUT) {
        Ok((stream, r, s)) => Some(Accepted { stream, tls: Some((r, s)), peer }),
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
