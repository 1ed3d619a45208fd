//! An impairing TCP proxy between the harness and the bridge (a field's Wi-Fi): each direction
//! delays what it forwards by a latency ± a jitter (the order of the bytes kept, as TCP keeps
//! it), may limit the bandwidth (a token bucket; the queue it holds is bounded by the
//! bandwidth × the delay, so a slow link pushes back on the sender as a real one does),
//! [`LinkProxy::stall`] holds everything (data and closes) in both directions for a while and
//! then lets it through in order (a Wi-Fi that roams), and [`LinkProxy::reset`] cuts every
//! connection at once. Binds 127.0.0.1 only. Used by the link tests and the link matrix
//! benchmark (`benches/link_matrix.rs` includes this file).
//!
//! Ours on std threads rather than the `noxious` crate (a Rust port of Toxiproxy): no new
//! dependency (noxious brings its own tokio server and control API for what is a hundred lines
//! here), one thread per direction like the stalling proxy it grew from, and the stall holds
//! closes as well as data.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What the proxy does to each direction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Impair {
    /// The one-way latency added.
    pub delay: Duration,
    /// Each chunk's latency varies uniformly within ± this (never below zero; the order kept).
    pub jitter: Duration,
    /// The bandwidth, bits per second (`None`: as fast as the sockets go).
    pub rate_bps: Option<u64>,
}

impl Impair {
    /// A latency ± a jitter, in ms.
    pub fn latency_ms(delay_ms: u64, jitter_ms: u64) -> Impair {
        Impair {
            delay: Duration::from_millis(delay_ms),
            jitter: Duration::from_millis(jitter_ms),
            rate_bps: None,
        }
    }

    /// The most bytes a direction holds: the bandwidth × the longest delay, and at least 64 KiB
    /// (16 MiB without a bandwidth limit).
    fn queue_cap(&self) -> usize {
        match self.rate_bps {
            Some(bps) => {
                let in_flight = (bps as f64 / 8.0 * (self.delay + self.jitter).as_secs_f64()) as usize;
                in_flight.max(64 * 1024)
            }
            None => 16 << 20,
        }
    }
}

/// The proxy's state, shared by its threads.
struct State {
    impair: Mutex<Impair>,
    until: Mutex<Option<Instant>>,
    conns: Mutex<Vec<TcpStream>>,
    stop: AtomicBool,
}

/// The proxy; stops accepting on drop (open connections end with their peers).
pub struct LinkProxy {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    state: Arc<State>,
}

impl LinkProxy {
    /// Listens on 127.0.0.1:`port` (0: any free port, see [`LinkProxy::port`]), forwarding each
    /// connection to 127.0.0.1:`target` as it comes (waiting up to 10 s for the target to
    /// listen).
    pub fn start(port: u16, target: u16) -> LinkProxy {
        LinkProxy::impaired(port, target, Impair::default())
    }

    /// As [`LinkProxy::start`], each direction impaired by `impair`.
    pub fn impaired(port: u16, target: u16, impair: Impair) -> LinkProxy {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("the proxy binds 127.0.0.1");
        let port = listener.local_addr().expect("the proxy's address").port();
        let state = Arc::new(State {
            impair: Mutex::new(impair),
            until: Mutex::new(None),
            conns: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let st = state.clone();
        std::thread::spawn(move || {
            for (k, conn) in listener.incoming().enumerate() {
                if st.stop.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(a) = conn else { continue };
                // The target may still be starting: up to 10 s to listen.
                let t0 = Instant::now();
                let b = loop {
                    match TcpStream::connect(("127.0.0.1", target)) {
                        Err(_) if t0.elapsed() < Duration::from_secs(10) => {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        r => break r,
                    }
                };
                let Ok(b) = b else { continue };
                let _ = (a.set_nodelay(true), b.set_nodelay(true));
                if let (Ok(a2), Ok(b2)) = (a.try_clone(), b.try_clone()) {
                    st.conns.lock().unwrap().extend([a2, b2]);
                }
                for (dir, (from, to)) in [(&a, &b), (&b, &a)].into_iter().enumerate() {
                    let seed = (u64::from(port) << 32) ^ ((k as u64) << 1) ^ dir as u64;
                    let (from, to) = (from.try_clone().unwrap(), to.try_clone().unwrap());
                    direction(from, to, st.clone(), seed | 1);
                }
            }
        });
        LinkProxy { port, state }
    }

    /// Holds everything both ways for `d` from now.
    pub fn stall(&self, d: Duration) {
        *self.state.until.lock().unwrap() = Some(Instant::now() + d);
    }

    /// Cuts every connection now (both sockets of each shut down both ways).
    pub fn reset(&self) {
        for s in self.state.conns.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Changes the impairments (of the chunks read from now on).
    pub fn set(&self, impair: Impair) {
        *self.state.impair.lock().unwrap() = impair;
    }
}

impl Drop for LinkProxy {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Bytes read at one time, due at the other side at `due` (empty: the end of the stream).
struct Chunk {
    due: Instant,
    data: Vec<u8>,
}

/// One direction's queue between its reader and its writer.
#[derive(Default)]
struct Queue {
    chunks: Mutex<(VecDeque<Chunk>, usize)>,
    changed: Condvar,
}

/// Starts the two threads of one direction: the reader stamps each chunk with its due time, the
/// writer sends it then (after any stall, within the bandwidth).
fn direction(mut from: TcpStream, mut to: TcpStream, st: Arc<State>, mut rng: u64) {
    let q = Arc::new(Queue::default());
    let (qr, str_) = (q.clone(), st.clone());
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        let mut last_due = Instant::now();
        loop {
            let n = from.read(&mut buf).unwrap_or(0);
            let imp = *str_.impair.lock().unwrap();
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let u = (rng >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0; // uniform in [-1, 1)
            let lat = (imp.delay.as_secs_f64() + u * imp.jitter.as_secs_f64()).max(0.0);
            last_due = last_due.max(Instant::now() + Duration::from_secs_f64(lat));
            let mut g = qr.chunks.lock().unwrap();
            while g.1 > imp.queue_cap() {
                g = qr.changed.wait(g).unwrap();
            }
            g.0.push_back(Chunk { due: last_due, data: buf[..n].to_vec() });
            g.1 += n;
            qr.changed.notify_all();
            if n == 0 {
                return;
            }
        }
    });
    std::thread::spawn(move || {
        let mut next_send = Instant::now();
        loop {
            let chunk = {
                let mut g = q.chunks.lock().unwrap();
                loop {
                    if let Some(c) = g.0.pop_front() {
                        g.1 -= c.data.len();
                        q.changed.notify_all();
                        break c;
                    }
                    g = q.changed.wait(g).unwrap();
                }
            };
            sleep_until(chunk.due);
            held(&st.until);
            if chunk.data.is_empty() {
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
            if let Some(bps) = st.impair.lock().unwrap().rate_bps {
                sleep_until(next_send);
                let now = Instant::now();
                let took = Duration::from_secs_f64(chunk.data.len() as f64 * 8.0 / bps.max(1) as f64);
                next_send = next_send.max(now) + took;
            }
            if to.write_all(&chunk.data).is_err() {
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
        }
    });
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

/// Waits out a stall.
fn held(until: &Mutex<Option<Instant>>) {
    loop {
        let u = *until.lock().unwrap();
        match u {
            Some(t) if Instant::now() < t => std::thread::sleep(Duration::from_millis(2)),
            _ => return,
        }
    }
}
