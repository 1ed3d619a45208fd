//! A stalling TCP proxy between the harness and the bridge (a Wi-Fi that roams): it forwards
//! bytes both ways as they come, and [`StallProxy::stall`] holds everything (data and closes)
//! in both directions for a while, then lets it through in order. Binds 127.0.0.1 only.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The proxy; stops accepting on drop (open connections end with their peers).
pub struct StallProxy {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    until: Arc<Mutex<Option<Instant>>>,
    stop: Arc<AtomicBool>,
}

impl StallProxy {
    /// Listens on 127.0.0.1:`port`, forwarding each connection to 127.0.0.1:`target`.
    pub fn start(port: u16, target: u16) -> StallProxy {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("the proxy binds 127.0.0.1");
        let until = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let (u, s) = (until.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(a) = conn else { continue };
                let Ok(b) = TcpStream::connect(("127.0.0.1", target)) else { continue };
                let _ = (a.set_nodelay(true), b.set_nodelay(true));
                for (from, to) in [(&a, &b), (&b, &a)] {
                    let (from, to, u) = (from.try_clone().unwrap(), to.try_clone().unwrap(), u.clone());
                    std::thread::spawn(move || pump(from, to, &u));
                }
            }
        });
        StallProxy { port, until, stop }
    }

    /// Holds everything both ways for `d` from now.
    pub fn stall(&self, d: Duration) {
        *self.until.lock().unwrap() = Some(Instant::now() + d);
    }
}

impl Drop for StallProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
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

fn pump(mut from: TcpStream, mut to: TcpStream, until: &Mutex<Option<Instant>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = from.read(&mut buf).unwrap_or(0);
        held(until);
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            let _ = to.shutdown(Shutdown::Write);
            return;
        }
    }
}
