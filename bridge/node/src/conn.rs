//! One harness connection: a reader thread that turns lines into messages (bounded by
//! [`MAX_LINE_BYTES`]; a longer line is skipped and reported) and an outbox of encoded lines.
//!
//! A line queued when nothing is queued or being written goes to the socket at once from the
//! queuing thread (the bridge's loop), as much of it as the socket takes without waiting; what
//! is left, and every line queued behind it, is written in order by the connection's writer
//! thread, which waits on the socket. So the loop never blocks on the socket, and a line
//! usually costs no thread hand-over.
//!
//! Control lines are queued in order; a sweep line is queued only when no sweep is queued or
//! being written and the outbox holds less than [`SWEEP_QUEUE_MAX`] (a pong queued just before
//! does not stop it), so control traffic never waits behind more than one sweep, and only one
//! queued after it (the bridge keeps the newest sweep meanwhile). The socket keeps a bounded
//! number of bytes that the network has not taken yet (`TCP_NOTSENT_LOWAT`): a write that
//! would leave more waits, so "written" means nearly sent, even on a slow field link, where the
//! kernel would otherwise hold several sweeps before a control line. The bound adapts to the
//! link ([`next_not_sent`]): about [`NOT_SENT_WINDOW_S`] of the rate the writer thread's
//! blocked writes measure, between [`NOT_SENT_MIN`] and [`NOT_SENT_MAX`]; so on a slow link a
//! control line waits at most for the rest of one sweep and that window, and on a fast one the
//! socket takes whole sweeps at once.
//!
//! With TLS ([`acres_link_protocol::tls`]) each line is sealed into its TLS records as it is
//! queued (on the queuing thread, in queue order), [`SEAL_PIECE_BYTES`] of it at a time, each
//! piece queued as soon as it is sealed (so a sweep's first records are on their way while the
//! rest are sealed), and the outbox holds the records; the reader
//! thread reads through the session's [`TlsReader`]. Without TLS the outbox holds the lines.
//!
//! The outbox is bounded: past [`OUTBOX_MAX`] bytes queued (a harness that stops reading; the
//! steps' sweeps were dropped long before, see [`Conn::sweep_free`]) nothing more is queued and
//! [`Conn::overflowed`] tells the loop, which detaches the harness.
//!
//! The reader thread wakes the bridge's loop for each line ([`Wake`]). The socket's send buffer
//! is set to [`SOCKET_BUFFER_BYTES`] (the system may cap it) so that a sweep's step goes to the
//! operating system in one write instead of waiting for the harness to read its first part.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Condvar, Mutex};

use acres_link_protocol::tls::{Sealer, TlsReader};
use acres_link_protocol::{
    decode, encode, FromBridge, FromHarness, LineError, MAX_LINE_BYTES, SOCKET_BUFFER_BYTES,
};
use acres_ros::Wake;
use tracing::debug;

/// On a TLS link, how much of a line is sealed and queued at a time (two full TLS records).
const SEAL_PIECE_BYTES: usize = 32 * 1024;

/// What the reader thread got.
#[derive(Debug)]
pub enum Incoming {
    /// A line, read or not.
    Line(Result<FromHarness, LineError>),
    /// The socket closed (end of stream or an error).
    Closed,
}

/// A sweep may be queued behind at most this many bytes of lines.
pub const SWEEP_QUEUE_MAX: usize = 64 << 10;

/// The most bytes the socket may hold that the network has not taken (`TCP_NOTSENT_LOWAT`), on
/// a fast link (without a bound, Linux lets the send buffer grow to several MB of sweeps).
pub const NOT_SENT_MAX: u32 = 256 << 10;

/// The least such bytes, on a slow link (and at the start, until the first writes measure it).
pub const NOT_SENT_MIN: u32 = 8 << 10;

/// The not-sent bound is this long at the link's measured rate, s.
pub const NOT_SENT_WINDOW_S: f64 = 0.01;

/// A write that took at least this long waited for the network: its rate is the link's, s.
const BLOCKED_S: f64 = 0.001;

/// The not-sent bound after a write of `bytes` in the writer thread that took `elapsed_s`,
/// from `now`: a blocked write (at least [`BLOCKED_S`]) of at least [`NOT_SENT_MIN`] / 2 bytes
/// measures the link's rate and sets the bound to [`NOT_SENT_WINDOW_S`] of it; a write of at
/// least half the bound that did not block doubles it; both within [`NOT_SENT_MIN`],
/// [`NOT_SENT_MAX`].
pub fn next_not_sent(now: u32, bytes: usize, elapsed_s: f64) -> u32 {
    let next = if elapsed_s >= BLOCKED_S && bytes >= (NOT_SENT_MIN / 2) as usize {
        (bytes as f64 / elapsed_s * NOT_SENT_WINDOW_S) as u32
    } else if elapsed_s < BLOCKED_S && bytes >= (now / 2) as usize {
        now.saturating_mul(2)
    } else {
        now
    };
    next.clamp(NOT_SENT_MIN, NOT_SENT_MAX)
}

/// A sweep goes only when the socket holds at most this many bytes the peer has not
/// acknowledged (sent or not; [`unacked_bytes`]). The not-sent bound keeps the socket's own
/// queue short, but on a link slower than the sweeps TCP keeps the network's queue full (a
/// bottleneck's buffer: an access point's, or `tc`'s here), and every line waits behind it: at
/// 2 Mbit/s, a quarter to half a second. Waiting for the sweep before to be acknowledged (all
/// but this much) keeps at most about one sweep in the network, so a control line waits for at
/// most one sweep's transmission there too; the sweeps thin out (the newest kept) instead. The
/// cost: a sweep per round trip at most (a link of 100 ms round trip still carries 10 compact
/// sweeps a second, `f32` ones fewer).
pub const SWEEP_AFTER_UNACKED: usize = 16 << 10;

/// How often a waiting sweep reads the bytes not acknowledged.
const UNACKED_EVERY: std::time::Duration = std::time::Duration::from_millis(2);

/// The bytes the socket holds that the peer has not acknowledged, sent or not (Linux's
/// `SIOCOUTQ`, read as the `tx_queue` of the connection's row in `/proc/net/tcp` or `tcp6`:
/// the workspace forbids `unsafe`, so no `ioctl`); `None` when the system does not say.
pub fn unacked_bytes(stream: &TcpStream) -> Option<usize> {
    let (local, peer) = (stream.local_addr().ok()?, stream.peer_addr().ok()?);
    let table = if local.is_ipv4() { "/proc/net/tcp" } else { "/proc/net/tcp6" };
    tx_queue(&std::fs::read_to_string(table).ok()?, local.port(), peer.port())
}

/// The `tx_queue` of the row of a `/proc/net/tcp` table whose local and remote ports are these.
fn tx_queue(table: &str, local_port: u16, peer_port: u16) -> Option<usize> {
    let port = |addr: &str| addr.rsplit_once(':').and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
    table.lines().skip(1).find_map(|row| {
        let mut f = row.split_whitespace().skip(1);
        let (l, r, _state, queues) = (f.next()?, f.next()?, f.next()?, f.next()?);
        if port(l)? != local_port || port(r)? != peer_port {
            return None;
        }
        usize::from_str_radix(queues.split_once(':')?.0, 16).ok()
    })
}

/// The most bytes queued for a harness that does not read; past it the harness is detached
/// (at 20 steps a second without sweeps, about 10 s of steps).
pub const OUTBOX_MAX: usize = 2 << 20;

/// A line in the outbox (its TLS records with TLS).
struct Queued {
    line: Vec<u8>,
    /// Bytes of it already written.
    from: usize,
    /// It carries a sweep (on a TLS link: it is the last piece of a sweep's line).
    sweep: bool,
    /// It ends a line (a TLS link queues a long line as several pieces of records).
    last: bool,
}

#[derive(Default)]
struct Outbox {
    lines: VecDeque<Queued>,
    /// Bytes of the queued lines not written yet.
    queued_bytes: usize,
    sweep_in_flight: bool,
    /// A thread is writing to the socket (the queuing thread or the writer thread).
    writing: bool,
    closed: bool,
    /// The bytes queued when the outbox passed [`OUTBOX_MAX`] (nothing is queued after).
    overflowed: Option<usize>,
}

/// Counts of one connection.
#[derive(Debug, Default)]
pub struct Counts {
    /// Lines written.
    pub lines_out: AtomicU64,
    /// Bytes written.
    pub bytes_out: AtomicU64,
    /// Lines read.
    pub lines_in: AtomicU64,
    /// Bytes read.
    pub bytes_in: AtomicU64,
}

/// A harness connection.
pub struct Conn {
    /// The peer, for logs.
    pub peer: String,
    stream: TcpStream,
    outbox: Arc<(Mutex<Outbox>, Condvar)>,
    /// Lines from the harness.
    pub rx: Receiver<Incoming>,
    /// Counts.
    pub counts: Arc<Counts>,
    /// Seals lines into TLS records (TLS links).
    sealer: Option<Sealer>,
    /// When the bytes not acknowledged were last read, and what they were.
    unacked: Mutex<Option<(std::time::Instant, Option<usize>)>>,
}

impl Conn {
    /// Starts the reader and writer threads of `stream` (with its TLS session's two halves
    /// when `tls`); the reader calls `wake` after each line it hands over.
    pub fn start(stream: TcpStream, tls: Option<(TlsReader, Sealer)>, wake: Wake) -> std::io::Result<Conn> {
        stream.set_nodelay(true)?;
        stream.set_nonblocking(false)?;
        let sock = socket2::SockRef::from(&stream);
        if let Err(e) = sock.set_send_buffer_size(SOCKET_BUFFER_BYTES) {
            debug!(error = %e, "the send buffer keeps its size");
        }
        if let Err(e) = sock.set_tcp_notsent_lowat(NOT_SENT_MIN) {
            debug!(error = %e, "no bound on the bytes not sent");
        }
        debug!(bytes = sock.send_buffer_size().unwrap_or(0), "link send buffer");
        let peer = stream.peer_addr().map_or_else(|_| "?".into(), |a| a.to_string());
        let outbox = Arc::new((Mutex::new(Outbox::default()), Condvar::new()));
        let counts = Arc::new(Counts::default());
        let (tx, rx) = channel();
        let (source, sealer): (Box<dyn Read + Send>, _) = match tls {
            Some((r, s)) => (Box::new(r), Some(s)),
            None => (Box::new(stream.try_clone()?), None),
        };
        let mut reader = BufReader::with_capacity(1 << 16, source);
        let c = counts.clone();
        std::thread::Builder::new().name("link-read".into()).spawn(move || loop {
            match read_line(&mut reader, &c) {
                Some(item) => {
                    if tx.send(Incoming::Line(item)).is_err() {
                        return;
                    }
                    wake.wake();
                }
                None => {
                    let _ = tx.send(Incoming::Closed);
                    wake.wake();
                    return;
                }
            }
        })?;
        let (ob, mut w, c) = (outbox.clone(), stream.try_clone()?, counts.clone());
        std::thread::Builder::new().name("link-write".into()).spawn(move || write_loop(&ob, &mut w, &c))?;
        Ok(Conn { peer, stream, outbox, rx, counts, sealer, unacked: Mutex::new(None) })
    }

    /// The TLS session's channel binding (empty without TLS).
    pub fn binding(&self) -> &[u8] {
        self.sealer.as_ref().map_or(&[], Sealer::binding)
    }

    /// Queues a message.
    pub fn send(&self, m: &FromBridge) {
        self.push(encode(m), false);
    }

    /// Queues an encoded line; `sweep`: it carries a sweep.
    pub fn send_line(&self, line: String, sweep: bool) {
        self.push(line, sweep);
    }

    fn push(&self, line: String, sweep: bool) {
        let Some(s) = &self.sealer else {
            return self.push_bytes(line.into_bytes(), sweep, true);
        };
        // Sealed and queued a piece at a time: the socket, and the harness's decryption, start
        // on the first records while the rest of a sweep's line is being sealed.
        let mut pieces = line.as_bytes().chunks(SEAL_PIECE_BYTES).peekable();
        while let Some(piece) = pieces.next() {
            let last = pieces.peek().is_none();
            self.push_bytes(s.seal(piece), sweep && last, last);
        }
    }

    fn push_bytes(&self, line: Vec<u8>, sweep: bool, last: bool) {
        let (lock, cv) = &*self.outbox;
        let mut o = lock.lock().expect("outbox lock");
        let mut from = 0;
        if o.lines.is_empty() && !o.writing && !o.closed {
            // Nothing before it: as much as the socket takes now, from this thread.
            o.writing = true;
            drop(o);
            from = write_now(&self.stream, &line);
            self.counts.bytes_out.fetch_add(from as u64, Ordering::Relaxed);
            o = lock.lock().expect("outbox lock");
            o.writing = false;
            if from == line.len() {
                // Only this thread queues lines: none came while it wrote, so the writer
                // thread has nothing to do.
                if last {
                    self.counts.lines_out.fetch_add(1, Ordering::Relaxed);
                }
                return;
            }
        }
        if o.overflowed.is_some() {
            return;
        }
        if o.queued_bytes + line.len() - from > OUTBOX_MAX {
            o.overflowed = Some(o.queued_bytes + line.len() - from);
            return;
        }
        if sweep {
            o.sweep_in_flight = true;
        }
        o.queued_bytes += line.len() - from;
        o.lines.push_back(Queued { line, from, sweep, last });
        cv.notify_one();
    }

    /// True when a sweep could go at once: no sweep queued or being written, less than
    /// [`SWEEP_QUEUE_MAX`] queued before it, and at most [`SWEEP_AFTER_UNACKED`] bytes in the
    /// socket that the harness's side has not acknowledged ([`unacked_bytes`]).
    pub fn sweep_free(&self) -> bool {
        let o = self.outbox.0.lock().expect("outbox lock");
        if o.sweep_in_flight || o.queued_bytes >= SWEEP_QUEUE_MAX {
            return false;
        }
        drop(o);
        // Read at most every UNACKED_EVERY (the loop asks every half millisecond while a sweep
        // waits, and the table is a file of every connection's row).
        let mut seen = self.unacked.lock().expect("unacked lock");
        if seen.is_none_or(|(at, _)| at.elapsed() >= UNACKED_EVERY) {
            *seen = Some((std::time::Instant::now(), unacked_bytes(&self.stream)));
        }
        seen.and_then(|(_, b)| b).is_none_or(|b| b <= SWEEP_AFTER_UNACKED)
    }

    /// The bytes queued when the outbox passed [`OUTBOX_MAX`], if it did: the harness does
    /// not read.
    pub fn overflowed(&self) -> Option<usize> {
        self.outbox.0.lock().expect("outbox lock").overflowed
    }

    /// Writes what is queued (up to `timeout`), then closes the socket (with TLS, after the
    /// session's `close_notify`).
    pub fn close(&self, timeout: std::time::Duration) {
        if let Some(s) = &self.sealer {
            self.push_bytes(s.close_notify(), false, true);
        }
        let deadline = std::time::Instant::now() + timeout;
        while std::time::Instant::now() < deadline {
            let o = self.outbox.0.lock().expect("outbox lock");
            if o.lines.is_empty() || o.closed {
                break;
            }
            drop(o);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let (lock, cv) = &*self.outbox;
        lock.lock().expect("outbox lock").closed = true;
        cv.notify_one();
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let (lock, cv) = &*self.outbox;
        if let Ok(mut o) = lock.lock() {
            o.closed = true;
        }
        cv.notify_one();
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// Writes what the socket takes without waiting; gives the bytes written (0 when it takes
/// nothing or fails: the writer thread then meets the error).
fn write_now(stream: &TcpStream, buf: &[u8]) -> usize {
    let sock = socket2::SockRef::from(stream);
    let mut n = 0;
    while n < buf.len() {
        match sock.send_with_flags(&buf[n..], libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    n
}

fn write_loop(outbox: &(Mutex<Outbox>, Condvar), w: &mut TcpStream, counts: &Counts) {
    let (lock, cv) = outbox;
    let mut not_sent = NOT_SENT_MIN;
    loop {
        let q = {
            let mut o = lock.lock().expect("outbox lock");
            loop {
                if o.closed {
                    return;
                }
                if !o.writing {
                    if let Some(q) = o.lines.pop_front() {
                        o.queued_bytes -= q.line.len() - q.from;
                        o.writing = true;
                        break q;
                    }
                }
                o = cv.wait(o).expect("outbox lock");
            }
        };
        let rest = &q.line[q.from..];
        let started = std::time::Instant::now();
        let ok = w.write_all(rest).is_ok();
        let next = next_not_sent(not_sent, rest.len(), started.elapsed().as_secs_f64());
        if next != not_sent {
            not_sent = next;
            if let Err(e) = socket2::SockRef::from(&*w).set_tcp_notsent_lowat(not_sent) {
                debug!(error = %e, "the bound on the bytes not sent stays");
            }
        }
        if q.last {
            counts.lines_out.fetch_add(1, Ordering::Relaxed);
        }
        counts.bytes_out.fetch_add(rest.len() as u64, Ordering::Relaxed);
        let mut o = lock.lock().expect("outbox lock");
        o.writing = false;
        if q.sweep {
            o.sweep_in_flight = false;
        }
        if !ok {
            debug!("link write failed; the connection closes");
            o.closed = true;
            return;
        }
    }
}

/// Reads one line of at most [`MAX_LINE_BYTES`]; a longer one is read to its end and reported
/// as oversized. `None` at the end of the stream.
pub fn read_line(r: &mut impl BufRead, counts: &Counts) -> Option<Result<FromHarness, LineError>> {
    let mut buf: Vec<u8> = Vec::new();
    let mut len = 0usize;
    loop {
        let chunk = match r.fill_buf() {
            Ok([]) => return None,
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..=i], true),
            None => (chunk, false),
        };
        let n = part.len();
        len += n;
        if len <= MAX_LINE_BYTES + 1 {
            buf.extend_from_slice(part);
        }
        r.consume(n);
        if done {
            break;
        }
    }
    counts.lines_in.fetch_add(1, Ordering::Relaxed);
    counts.bytes_in.fetch_add(len as u64, Ordering::Relaxed);
    if len > MAX_LINE_BYTES + 1 {
        return Some(Err(LineError::Oversized { len, max: MAX_LINE_BYTES }));
    }
    Some(match String::from_utf8(buf) {
        Ok(s) => decode(&s),
        Err(_) => Err(LineError::Malformed("the line is not UTF-8".into())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn the_bytes_not_acknowledged_are_read_from_the_connections_row() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1631 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1631 0100007F:D2F0 01 00012C00:00000000 01:00000014 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1";
        assert_eq!(tx_queue(table, 0x1631, 0xD2F0), Some(0x12C00));
        assert_eq!(tx_queue(table, 0x1631, 0), Some(0), "the listening row");
        assert_eq!(tx_queue(table, 0x1631, 1), None);
        // A real connection: nothing written, nothing held; a peer that never reads fills its
        // window, then the bytes wait unacknowledged in this socket.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (_peer, _) = l.accept().unwrap();
        assert_eq!(unacked_bytes(&s), Some(0));
        s.set_nonblocking(true).unwrap();
        let chunk = vec![7u8; 1 << 16];
        let mut written = 0usize;
        while written < 64 << 20 {
            match (&s).write(&chunk) {
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        let held = unacked_bytes(&s).unwrap();
        assert!(held > 0 && held <= written, "{held} bytes held of {written} written");
    }

    #[test]
    fn the_not_sent_bound_follows_the_links_rate_within_its_limits() {
        // 5 Mbit/s: 62.5 kB in 0.1 s; 10 ms of it is 6.25 kB, below the least bound.
        assert_eq!(next_not_sent(NOT_SENT_MAX, 62_500, 0.1), NOT_SENT_MIN);
        // 100 Mbit/s: 125 kB in 10 ms; 10 ms of it.
        assert_eq!(next_not_sent(NOT_SENT_MIN, 125_000, 0.01), 125_000);
        // Fast writes of at least half the bound double it, up to the most.
        assert_eq!(next_not_sent(NOT_SENT_MIN, 4096, 0.0001), 2 * NOT_SENT_MIN);
        assert_eq!(next_not_sent(NOT_SENT_MAX, 1 << 20, 0.0001), NOT_SENT_MAX);
        // Small lines say nothing: a step that waited, a pong that did not.
        assert_eq!(next_not_sent(3 * NOT_SENT_MIN, 600, 0.05), 3 * NOT_SENT_MIN);
        assert_eq!(next_not_sent(3 * NOT_SENT_MIN, 600, 0.0), 3 * NOT_SENT_MIN);
    }
}
