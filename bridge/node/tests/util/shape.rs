//! The link's port shaped by the kernel (`tc`): lo's MTU set to an Ethernet's 1500, an `htb`
//! root qdisc on lo whose `u32` filters send the port's packets (both ways: source or
//! destination port) to a class limited to a rate, everything else to a class at 10 Gbit/s.
//! Latency, jitter and loss need `sch_netem`, which this kernel does not have: the proxy
//! ([`super::proxy`]) adds them in user space.
//!
//! NETWORK SAFETY: it changes lo, so it refuses to run outside a private network namespace with
//! lo alone (the host's lo is never touched). Needs root (the test command's namespaces are).
//! Used by the link tests and the link matrix benchmark (`benches/link_matrix.rs`).

use std::process::Command;

/// The shaping, removed on drop (the qdisc deleted, lo's MTU restored).
pub struct Shaped {
    mtu_before: String,
}

fn run(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("{}: {e}", args[0]));
    assert!(
        out.status.success(),
        "`{}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

impl Shaped {
    /// Limits the traffic of 127.0.0.1:`port` (both ways) to `rate_kbit` kbit/s, lo's MTU 1500;
    /// the class's queue is the kernel's default (1000 packets: a bloated buffer, since lo's
    /// packets are up to 64 KiB segments).
    pub fn port(port: u16, rate_kbit: u64) -> Shaped {
        Shaped::port_queue(port, rate_kbit, None)
    }

    /// As [`Shaped::port`], the class's queue limited to `queue_bytes` (a `bfifo`: tail drop, an
    /// access point's buffer; at least 128 KiB, since lo sends 64 KiB segments) when given.
    pub fn port_queue(port: u16, rate_kbit: u64, queue_bytes: Option<u64>) -> Shaped {
        assert!(
            acres_ros::env::in_loopback_only_netns(),
            "shaping lo needs a private network namespace with lo alone (run under unshare -n)"
        );
        let mtu_before = std::fs::read_to_string("/sys/class/net/lo/mtu")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "65536".into());
        let _ = Command::new("tc").args(["qdisc", "del", "dev", "lo", "root"]).output();
        run(&["ip", "link", "set", "lo", "mtu", "1500"]);
        run(&["tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb", "default", "10"]);
        run(&["tc", "class", "add", "dev", "lo", "parent", "1:", "classid", "1:10", "htb", "rate", "10gbit"]);
        // Everything else on lo (DDS) had no queue at all before the htb root: a deep one, so
        // that the sweeps' bursts of UDP are not dropped here.
        run(&["tc", "qdisc", "add", "dev", "lo", "parent", "1:10", "pfifo", "limit", "100000"]);
        let rate = format!("{rate_kbit}kbit");
        run(&["tc", "class", "add", "dev", "lo", "parent", "1:", "classid", "1:20", "htb", "rate", &rate]);
        if let Some(q) = queue_bytes {
            let limit = q.max(128 << 10).to_string();
            run(&["tc", "qdisc", "add", "dev", "lo", "parent", "1:20", "bfifo", "limit", &limit]);
        }
        let p = port.to_string();
        for way in ["sport", "dport"] {
            run(&[
                "tc", "filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                "match", "ip", way, &p, "0xffff", "flowid", "1:20",
            ]);
        }
        Shaped { mtu_before }
    }

    /// Changes the shaped class's rate (the qdisc stays: nothing queued is dropped, so DDS
    /// traffic on lo is not disturbed between the cells of a benchmark).
    pub fn set_rate(&self, rate_kbit: u64) {
        let rate = format!("{rate_kbit}kbit");
        run(&["tc", "class", "change", "dev", "lo", "parent", "1:", "classid", "1:20", "htb", "rate", &rate]);
    }

    /// Bytes the shaped class has sent and packets it dropped so far (`tc -s class`).
    pub fn class_counts() -> (u64, u64) {
        Shaped::counts_of("1:20")
    }

    /// Bytes the class `classid` (`1:20` the port's, `1:10` everything else) has sent and
    /// packets it dropped so far.
    pub fn counts_of(classid: &str) -> (u64, u64) {
        let out = Command::new("tc").args(["-s", "class", "show", "dev", "lo", "classid", classid]).output();
        let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
        let field = |after: &str| -> u64 {
            text.split(after)
                .nth(1)
                .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).find(|t| !t.is_empty()))
                .and_then(|t| t.parse().ok())
                .unwrap_or(0)
        };
        (field("Sent "), field("dropped "))
    }
}

impl Drop for Shaped {
    fn drop(&mut self) {
        let _ = Command::new("tc").args(["qdisc", "del", "dev", "lo", "root"]).output();
        let _ = Command::new("ip").args(["link", "set", "lo", "mtu", &self.mtu_before]).output();
    }
}
