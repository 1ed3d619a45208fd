//! The link on a field's Wi-Fi, with real processes (core node, vehicle node, bridge, harness):
//! the bridge's port shaped by the kernel (`tc`: htb, lo's MTU 1500) to a low rate, and the
//! impairing proxy between harness and bridge adding 50 ms ± 20 ms each way. A truck on the
//! route still wakes the planner (`returns_on_route`) and the run succeeds with no `link_lost`.
//! (The 3 s stall over the same impaired link is in `link_faults`.) The proxy itself, against an
//! echo server on loopback (no DDS, no `tc`: it runs in the plain `cargo test` too): order kept
//! under jitter, the latency added, a stall held, a reset cut.
//!
//! NETWORK SAFETY: DDS in every node, and `tc` on lo: this runs only in a private network
//! namespace (see `util`), loopback-only, the sockets on 127.0.0.1.

mod util;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use util::proxy::{Impair, LinkProxy};
use util::shape::Shaped;
use util::*;

/// The bridge's port shaped to this, kbit/s. At 10 × real time (the link tests' fast rate) the
/// sweeps come ten times as often, so this is the share of the link a real-time run has at
/// 1 Mbit/s: with the heaviest sweep encoding (`f32`, protocol 3's packing, 307 kB a 14,400-point
/// sweep) most sweeps are dropped (the newest kept), steps and control lines still pass. (The
/// default `mm_zstd` is about 12 × smaller: at this rate it drops none.)
const RATE_KBIT: u64 = 10_000;

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_truck_on_the_route_wakes_the_planner_over_a_slow_laggy_link() {
    require_netns();
    let sc = "link_sim_truck_on_lane";
    let t0 = Instant::now();
    let stack = Stack::start("impaired-truck", sc, 5671, 10.0, &[]);
    let _shaped = Shaped::port(stack.port, RATE_KBIT);
    let proxy = LinkProxy::impaired(5771, stack.port, Impair::latency_ms(50, 20));
    let mut h = stack.harness_via(proxy.port, sc, &["--link-sweeps", "f32"]);
    let code = h.wait(Duration::from_secs(300));
    let (sent, dropped) = Shaped::class_counts();
    let rows = stack.rows(sc);
    let stats: Vec<_> = rows.iter().filter(|r| r["type"] == "link_stats").collect();
    let wakes: Vec<_> =
        rows.iter().filter(|r| r["type"] == "wake" && r["reason"] == "returns_on_route").collect();
    eprintln!(
        "{sc} at 10× over {RATE_KBIT} kbit/s and 50 ± 20 ms: exit {code:?} after {:?}; returns_on_route wake-ups {}; the shaped class sent {sent} B, dropped {dropped} packets; last link_stats {:?}",
        t0.elapsed(),
        wakes.len(),
        stats.last()
    );
    assert_eq!(code, Some(0), "the run succeeds; harness log:\n{}", stack.log("harness"));
    assert!(!rows.iter().any(|r| r["type"] == "link_lost"), "no link_lost row");
    assert!(!wakes.is_empty(), "no returns_on_route wake-up: the truck's returns did not come over the link");
    assert!(
        rows.iter().any(|r| r["type"] == "returns_on_route" && r["leg"] == "route to F55"),
        "the returns are on the route to F55"
    );
    assert!(sent > 0, "the shaped class carried the link (its filter matched the port)");
    let last_dropped = stats.last().and_then(|r| r["dropped_sweeps"].as_u64()).unwrap_or(0);
    assert!(last_dropped > 0, "the slow link drops sweeps (the newest kept): {stats:?}");
    assert!(validates(&stack.run_dir(sc)), "the folder validates");
}

/// An echo server on 127.0.0.1 (any port): each connection's bytes back as they come.
fn echo() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { continue };
            std::thread::spawn(move || {
                let mut w = c.try_clone().unwrap();
                let _ = std::io::copy(&mut &c, &mut w);
            });
        }
    });
    port
}

#[test]
fn the_proxy_keeps_the_order_adds_its_latency_holds_a_stall_and_cuts_on_reset() {
    let proxy = LinkProxy::impaired(0, echo(), Impair::latency_ms(20, 15));
    let mut c = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut r = BufReader::new(c.try_clone().unwrap());
    // Lines written one by one, each chunk with its own jitter: back whole and in order, each
    // at least the least latency of both ways (2 × 5 ms) after it went.
    for n in 0..50 {
        let t0 = Instant::now();
        c.write_all(format!("line {n}\n").as_bytes()).unwrap();
        let mut l = String::new();
        r.read_line(&mut l).unwrap();
        assert_eq!(l, format!("line {n}\n"));
        assert!(t0.elapsed() >= Duration::from_millis(10), "line {n} back after {:?}", t0.elapsed());
    }
    // A stall holds the bytes until it ends.
    proxy.stall(Duration::from_millis(500));
    let t0 = Instant::now();
    c.write_all(b"held\n").unwrap();
    let mut l = String::new();
    r.read_line(&mut l).unwrap();
    assert_eq!(l, "held\n");
    assert!(t0.elapsed() >= Duration::from_millis(450), "back after {:?} of a 500 ms stall", t0.elapsed());
    // A reset cuts the connection: the end of the stream.
    proxy.reset();
    let mut l = String::new();
    assert_eq!(r.read_line(&mut l).unwrap_or(0), 0, "read {l:?} after the reset");
}

#[test]
fn the_proxys_bandwidth_limit_holds() {
    // 8 Mbit/s each way: 250 kB take at least a quarter of a second to come back.
    let imp = Impair { rate_bps: Some(8_000_000), ..Impair::latency_ms(0, 0) };
    let proxy = LinkProxy::impaired(0, echo(), imp);
    let c = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut w = c.try_clone().unwrap();
    let data = vec![b'x'; 250_000];
    let t0 = Instant::now();
    let sender = std::thread::spawn(move || w.write_all(&data).unwrap());
    let mut got = 0;
    let mut buf = vec![0u8; 64 * 1024];
    while got < 250_000 {
        let n = std::io::Read::read(&mut &c, &mut buf).unwrap();
        assert!(n > 0, "the stream ended after {got} bytes");
        got += n;
    }
    sender.join().unwrap();
    let took = t0.elapsed();
    eprintln!("250 kB through the proxy at 8 Mbit/s and back: {took:?}");
    assert!(took >= Duration::from_millis(240), "250 kB back after {took:?}");
}
