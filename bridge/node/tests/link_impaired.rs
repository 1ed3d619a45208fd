//! The link on a field's Wi-Fi, with real processes (core node, vehicle node, bridge, harness):
//! the bridge's port shaped by the kernel (`tc`: htb, lo's MTU 1500) to a low rate, and the
//! impairing proxy between harness and bridge adding 50 ms ± 20 ms each way. A truck on the
//! route still wakes the planner (`returns_on_route`) and the run succeeds with no `link_lost`.
//! (The 3 s stall over the same impaired link is in `link_faults`.)
//!
//! NETWORK SAFETY: DDS in every node, and `tc` on lo: this runs only in a private network
//! namespace (see `util`), loopback-only, the sockets on 127.0.0.1.

mod util;

use std::time::{Duration, Instant};

use util::proxy::{Impair, LinkProxy};
use util::shape::Shaped;
use util::*;

/// The bridge's port shaped to this, kbit/s. At 10 × real time (the link tests' fast rate) the
/// sweeps come ten times as often, so this is the share of the link a real-time run has at
/// 1 Mbit/s: most sweeps are dropped (the newest kept), steps and control lines still pass.
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
    let mut h = stack.harness_via(proxy.port, sc, &[]);
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
