//! TLS on the link socket: TLS 1.3 only, rustls with the ring provider, the bridge's
//! self-signed certificate pinned by the harness by its SHA-256 fingerprint (no CA, no names).
//!
//! - The bridge's [`Identity`]: made in memory at each start, or loaded from (and, the first
//!   time, written to) a PEM file; [`Identity::fingerprint`] is what the harness pins.
//! - [`server_handshake`] / [`client_handshake`] run the handshake on a blocking socket (with a
//!   timeout) and split the session in two: a [`TlsReader`] (`Read`, for the reader thread) and
//!   a [`Sealer`] (plaintext in, the TLS records to write out), so that the reader and the
//!   writers never hold a lock across a socket call. Records are written in the order they are
//!   sealed: each side seals from one thread at a time and writes what it sealed in order.
//! - A plaintext client of a TLS bridge is told so in a plaintext `refused` line
//!   ([`looks_like_tls`] decides from the first byte a client sends).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, Connection, DigitallySignedStruct, SignatureScheme};

/// The bridge's TLS configuration ([`Identity::server_config`]).
pub use rustls::ServerConfig;

use crate::auth::{hex, unhex, CHANNEL_BINDING_BYTES, EXPORTER_LABEL};

/// The name the harness gives the bridge (never checked: the pin is).
const SERVER_NAME: &str = "acres-bridge";

/// A TLS failure, in words that say what to do.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The identity file cannot be read, made or written.
    #[error("TLS identity {path}: {why}")]
    Identity {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// A fingerprint that is not 64 hex characters.
    #[error("{0:?} is not a SHA-256 fingerprint (64 hex characters, colons allowed, `sha256:` before them allowed)")]
    BadFingerprint(String),
    /// The bridge's certificate is not the pinned one.
    #[error("the bridge's certificate has the fingerprint {seen}, which is not pinned (pinned: {pinned}); check --link-fingerprint / --link-trust against the fingerprint the bridge prints")]
    NotPinned {
        /// The certificate's fingerprint.
        seen: String,
        /// The pinned ones.
        pinned: String,
    },
    /// The handshake failed.
    #[error("TLS handshake failed: {0}")]
    Handshake(String),
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The SHA-256 fingerprint of a certificate (DER), 64 lowercase hex characters.
pub fn fingerprint_of(cert_der: &[u8]) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, cert_der).as_ref())
}

/// Reads a fingerprint as people write it: hex in either case, colons allowed, an optional
/// `sha256:` (or `SHA256:`) before it; gives the 64 lowercase hex characters.
pub fn parse_fingerprint(s: &str) -> Result<String, TlsError> {
    let t = s.trim();
    let t = t.strip_prefix("sha256:").or_else(|| t.strip_prefix("SHA256:")).unwrap_or(t);
    let h: String = t.chars().filter(|c| *c != ':').collect::<String>().to_ascii_lowercase();
    match unhex(&h) {
        Some(b) if b.len() == 32 => Ok(h),
        _ => Err(TlsError::BadFingerprint(s.to_string())),
    }
}

/// The bridge's certificate and private key.
pub struct Identity {
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The private key is never printed.
        f.debug_struct("Identity").field("fingerprint", &self.fingerprint()).finish_non_exhaustive()
    }
}

impl Identity {
    /// A new self-signed identity (ECDSA P-256), in memory.
    pub fn generate() -> Result<Identity, TlsError> {
        let ck = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_string()])
            .map_err(|e| TlsError::Identity { path: "(in memory)".into(), why: e.to_string() })?;
        let key = PrivateKeyDer::try_from(ck.key_pair.serialize_der())
            .map_err(|e| TlsError::Identity { path: "(in memory)".into(), why: e.to_string() })?;
        Ok(Identity { cert: ck.cert.der().clone(), key })
    }

    /// Loads the identity from a PEM file (a certificate and its private key); when the file
    /// does not exist, makes one and writes it there (mode 0600: it holds the private key).
    pub fn load_or_make(path: &Path) -> Result<Identity, TlsError> {
        let err = |why: String| TlsError::Identity { path: path.display().to_string(), why };
        if !path.exists() {
            let ck = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_string()])
                .map_err(|e| err(e.to_string()))?;
            let pem = format!("{}{}", ck.cert.pem(), ck.key_pair.serialize_pem());
            write_private(path, pem.as_bytes()).map_err(|e| err(format!("cannot write it: {e}")))?;
        }
        let cert =
            CertificateDer::from_pem_file(path).map_err(|e| err(format!("no certificate in it: {e}")))?;
        let key =
            PrivateKeyDer::from_pem_file(path).map_err(|e| err(format!("no private key in it: {e}")))?;
        Ok(Identity { cert, key })
    }

    /// The certificate's SHA-256 fingerprint (what the harness pins).
    pub fn fingerprint(&self) -> String {
        fingerprint_of(&self.cert)
    }

    /// The bridge's TLS configuration (TLS 1.3, no session tickets, no client certificates).
    pub fn server_config(&self) -> Result<Arc<ServerConfig>, TlsError> {
        let mut c = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| TlsError::Handshake(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(vec![self.cert.clone()], self.key.clone_key())
            .map_err(|e| TlsError::Handshake(e.to_string()))?;
        c.send_tls13_tickets = 0;
        Ok(Arc::new(c))
    }
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    std::fs::write(path, bytes)
}

/// Accepts exactly the certificates whose fingerprint is pinned; remembers the one it saw.
#[derive(Debug)]
struct Pinned {
    pins: Vec<String>,
    seen: Mutex<Option<String>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let fp = fingerprint_of(end_entity);
        let ok = self.pins.contains(&fp);
        *self.seen.lock().expect("seen lock") = Some(fp);
        if ok {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::ApplicationVerificationFailure))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// The TLS 1.3 session of one link, split for a reader thread and the writers.
fn split(conn: Connection, stream: &TcpStream) -> io::Result<(TlsReader, Sealer)> {
    let mut binding = [0u8; CHANNEL_BINDING_BYTES];
    conn.export_keying_material(&mut binding, EXPORTER_LABEL, None)
        .map_err(|e| io::Error::other(e.to_string()))?;
    let conn = Arc::new(Mutex::new(conn));
    let reader =
        TlsReader { sock: stream.try_clone()?, conn: conn.clone(), raw: vec![0; 1 << 16], start: 0, end: 0 };
    Ok((reader, Sealer { conn, binding }))
}

fn drive(conn: &mut Connection, stream: &mut TcpStream, timeout: Duration) -> io::Result<()> {
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    while conn.is_handshaking() {
        conn.complete_io(stream)?;
    }
    while conn.wants_write() {
        conn.write_tls(stream)?;
    }
    stream.set_read_timeout(None)?;
    stream.set_write_timeout(None)
}

/// The bridge's side of the handshake on a blocking socket (at most `timeout` a step).
pub fn server_handshake(
    mut stream: TcpStream,
    config: Arc<ServerConfig>,
    timeout: Duration,
) -> Result<(TcpStream, TlsReader, Sealer), TlsError> {
    let mut conn = Connection::Server(
        rustls::ServerConnection::new(config).map_err(|e| TlsError::Handshake(e.to_string()))?,
    );
    drive(&mut conn, &mut stream, timeout).map_err(|e| TlsError::Handshake(server_words(&e)))?;
    let (r, s) = split(conn, &stream).map_err(|e| TlsError::Handshake(e.to_string()))?;
    Ok((stream, r, s))
}

fn server_words(e: &io::Error) -> String {
    let s = e.to_string();
    if s.contains("AccessDenied") || s.contains("BadCertificate") {
        format!(
            "{s}: the harness does not trust this bridge's certificate (its pinned fingerprint is another)"
        )
    } else {
        s
    }
}

/// The harness's side: pins `fingerprints` (64 hex characters each), runs the handshake on a
/// blocking socket (at most `timeout` a step).
pub fn client_handshake(
    mut stream: TcpStream,
    fingerprints: &[String],
    timeout: Duration,
) -> Result<(TcpStream, TlsReader, Sealer), TlsError> {
    let provider = provider();
    let pins =
        Arc::new(Pinned { pins: fingerprints.to_vec(), seen: Mutex::new(None), provider: provider.clone() });
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| TlsError::Handshake(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(pins.clone())
        .with_no_client_auth();
    config.resumption = rustls::client::Resumption::disabled();
    config.enable_sni = false;
    let name = ServerName::try_from(SERVER_NAME).expect("a valid name");
    let mut conn = Connection::Client(
        ClientConnection::new(Arc::new(config), name).map_err(|e| TlsError::Handshake(e.to_string()))?,
    );
    if let Err(e) = drive(&mut conn, &mut stream, timeout) {
        let seen = pins.seen.lock().expect("seen lock").clone();
        return Err(match seen.filter(|s| !fingerprints.contains(s)) {
            Some(seen) => TlsError::NotPinned { seen, pinned: fingerprints.join(", ") },
            None => TlsError::Handshake(format!(
                "{e} (does the bridge speak TLS? one started with tls:=false needs --link-insecure)"
            )),
        });
    }
    let (r, s) = split(conn, &stream).map_err(|e| TlsError::Handshake(e.to_string()))?;
    Ok((stream, r, s))
}

/// Whether the first byte a client sent starts a TLS handshake record.
pub fn looks_like_tls(first: u8) -> bool {
    first == 0x16
}

/// The plaintext side of a TLS session: reads TLS records from its socket (without holding the
/// session's lock while it waits) and gives the plaintext.
pub struct TlsReader {
    sock: TcpStream,
    conn: Arc<Mutex<Connection>>,
    raw: Vec<u8>,
    start: usize,
    end: usize,
}

impl Read for TlsReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut c = self.conn.lock().expect("tls lock");
            match c.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            if self.start < self.end {
                let mut rd = &self.raw[self.start..self.end];
                self.start += c.read_tls(&mut rd)?;
                c.process_new_packets().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                continue;
            }
            drop(c);
            let n = self.sock.read(&mut self.raw)?;
            if n == 0 {
                return Ok(0);
            }
            (self.start, self.end) = (0, n);
        }
    }
}

/// The sending side of a TLS session: seals plaintext into the records to write.
pub struct Sealer {
    conn: Arc<Mutex<Connection>>,
    binding: [u8; CHANNEL_BINDING_BYTES],
}

impl Sealer {
    /// The TLS records of `plain` (and of anything the session has to send besides, such as a
    /// key update), to be written to the socket in the order sealed.
    pub fn seal(&self, plain: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(plain.len() + plain.len() / 512 + 64);
        let mut c = self.conn.lock().expect("tls lock");
        let mut rest = plain;
        while !rest.is_empty() {
            let n = c.writer().write(rest).unwrap_or(0);
            rest = &rest[n..];
            while c.wants_write() {
                if c.write_tls(&mut out).is_err() {
                    break;
                }
            }
            if n == 0 && !c.wants_write() && !rest.is_empty() {
                // Cannot happen with a Vec sink; never loop forever.
                break;
            }
        }
        out
    }

    /// The session's channel binding (its TLS exporter), which the attach's proofs cover.
    pub fn binding(&self) -> &[u8] {
        &self.binding
    }

    /// The `close_notify` alert's record.
    pub fn close_notify(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut c = self.conn.lock().expect("tls lock");
        c.send_close_notify();
        while c.wants_write() && c.write_tls(&mut out).is_ok() {}
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_read_as_people_write_them() {
        let h = "ab".repeat(32);
        assert_eq!(parse_fingerprint(&h).unwrap(), h);
        let colons = vec!["AB"; 32].join(":");
        assert_eq!(parse_fingerprint(&format!("sha256:{colons}")).unwrap(), h);
        assert!(matches!(parse_fingerprint("abcd"), Err(TlsError::BadFingerprint(_))));
        assert!(parse_fingerprint(&"zz".repeat(32)).is_err());
    }

    #[test]
    fn an_identity_written_once_loads_with_the_same_fingerprint() {
        let dir = std::env::temp_dir().join(format!("acres-tls-{}", std::process::id()));
        let path = dir.join("bridge.pem");
        let _ = std::fs::remove_file(&path);
        let a = Identity::load_or_make(&path).unwrap();
        let b = Identity::load_or_make(&path).unwrap();
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), Identity::generate().unwrap().fingerprint());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert!(!format!("{a:?}").contains("PRIVATE"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    type Served = std::thread::JoinHandle<Result<[u8; 5], TlsError>>;

    /// A bridge's side of one connection: the handshake, a line out, 5 bytes in.
    fn serve_once(cfg: Arc<ServerConfig>) -> (std::net::SocketAddr, Served) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let h = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            let (mut s, mut rd, seal) = server_handshake(s, cfg, Duration::from_secs(5))?;
            s.write_all(&seal.seal(b"hello over tls\n")).unwrap();
            let mut b = [0u8; 5];
            rd.read_exact(&mut b).unwrap();
            Ok(b)
        });
        (addr, h)
    }

    /// Real handshakes over loopback sockets: the pinned certificate is accepted and text goes
    /// both ways; another pin is refused, with words on both sides.
    #[test]
    fn the_pin_decides_over_a_real_socket() {
        let id = Identity::generate().unwrap();
        let cfg = id.server_config().unwrap();
        let (addr, server) = serve_once(cfg.clone());
        let c = TcpStream::connect(addr).unwrap();
        let (mut s, mut rd, seal) = client_handshake(c, &[id.fingerprint()], Duration::from_secs(5)).unwrap();
        let mut b = [0u8; 15];
        rd.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"hello over tls\n");
        s.write_all(&seal.seal(b"ok!\n\n")).unwrap();
        assert_eq!(&server.join().unwrap().unwrap(), b"ok!\n\n");

        let (addr, server) = serve_once(cfg);
        let c = TcpStream::connect(addr).unwrap();
        match client_handshake(c, &["00".repeat(32)], Duration::from_secs(5)) {
            Err(TlsError::NotPinned { seen, .. }) => assert_eq!(seen, id.fingerprint()),
            other => panic!("expected NotPinned, got {:?}", other.map(|_| ())),
        }
        let e = server.join().unwrap().unwrap_err().to_string();
        assert!(e.contains("does not trust this bridge's certificate"), "{e}");
    }
}
