//! The bridge's answers on the socket, with the bridge process alone (no vehicle): malformed,
//! unknown, oversized and out-of-order lines get the documented `error` and the link stays
//! usable; a wrong version, a second harness and a wrong or missing token are refused; a
//! non-loopback host without a token, or without TLS, is refused at start; a goal's long
//! string is refused before ROS sees it; a harness that stops reading is detached with the
//! bridge's memory bounded. The clients speak
//! TLS (the bridge's default), pinning the fingerprint the bridge wrote. Each test asserts the time it took.
//!
//! NETWORK SAFETY: the bridge creates a DDS participant: these tests run only in a private
//! network namespace (see `util`), loopback-only, the socket on 127.0.0.1.

mod util;

use std::time::{Duration, Instant};

use acres_link_protocol as link;
use link::{ErrorCode, FromBridge, FromHarness, RefusedCode};
use util::*;

fn error_code(m: Option<FromBridge>) -> ErrorCode {
    match m {
        Some(FromBridge::Error(e)) => e.code,
        other => panic!("expected an error line, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn bad_lines_get_the_documented_answers_and_the_link_stays_usable() {
    require_netns();
    let t0 = Instant::now();
    let dir = TempDir::new("lines");
    let _bridge = bridge(5641, &[], &dir.join("bridge.log"), &[]);
    let mut c = Raw::tls(5641, &dir);
    assert!(
        matches!(c.next(), Some(FromBridge::Hello(h)) if h.version == link::PROTOCOL_VERSION && !h.token_required)
    );
    // Before attach: unreadable lines are answered, a skill is out of order.
    c.send_raw(b"not json\n");
    assert_eq!(error_code(c.next()), ErrorCode::Malformed);
    c.send_raw(b"{\"type\":\"fly\"}\n");
    assert_eq!(error_code(c.next()), ErrorCode::UnknownType);
    c.send(&FromHarness::Skill(link::SkillRequest {
        id: 1,
        goal: acres_msgs::acres_interfaces::SkillGoal {
            skill: "goto".into(),
            field: "F56".into(),
            ..Default::default()
        },
    }));
    assert_eq!(error_code(c.next()), ErrorCode::OutOfOrder);
    let mut long = vec![b'x'; link::MAX_LINE_BYTES + 100];
    long.push(b'\n');
    c.send_raw(&long);
    assert_eq!(error_code(c.next()), ErrorCode::Oversized);
    // Still usable: attach, ping, a malformed line after attach, ping again.
    assert!(matches!(c.attach(link::PROTOCOL_VERSION, None), Some(FromBridge::Welcome(_))));
    c.send(&FromHarness::Ping(link::Ping { n: 7 }));
    assert!(matches!(c.next(), Some(FromBridge::Pong(p)) if p.n == 7));
    c.send_raw(b"{\"type\":\"beat\"}\n");
    assert_eq!(error_code(c.next()), ErrorCode::Malformed);
    c.send(&FromHarness::Ping(link::Ping { n: 8 }));
    assert!(matches!(c.next(), Some(FromBridge::Pong(p)) if p.n == 8));
    // A second harness is refused (busy) at its valid attach, not before, and closed; the first
    // stays attached.
    let mut second = Raw::tls(5641, &dir);
    assert!(matches!(second.next(), Some(FromBridge::Hello(_))));
    assert!(
        matches!(second.attach(link::PROTOCOL_VERSION, None), Some(FromBridge::Refused(r)) if r.code == RefusedCode::Busy)
    );
    assert!(second.next().is_none(), "the second connection is closed");
    c.send(&FromHarness::Ping(link::Ping { n: 9 }));
    assert!(matches!(c.next(), Some(FromBridge::Pong(p)) if p.n == 9));
    // After end, a new harness can attach; a wrong version is refused naming both versions.
    c.send(&FromHarness::End(link::End { cause: "done".into() }));
    assert!(c.next().is_none(), "the bridge closes after end");
    let mut v = Raw::tls(5641, &dir);
    assert!(matches!(v.next(), Some(FromBridge::Hello(_))));
    match v.attach(99, None) {
        Some(FromBridge::Refused(r)) => {
            assert_eq!(r.code, RefusedCode::Version);
            assert_eq!(r.reason, link::version_mismatch(link::PROTOCOL_VERSION, 99));
        }
        other => panic!("expected refused, got {other:?}"),
    }
    let took = t0.elapsed();
    eprintln!("bad lines and refusals: {took:?}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn the_token_is_checked_at_attach() {
    require_netns();
    let t0 = Instant::now();
    let dir = TempDir::new("token");
    let _bridge = bridge(5642, &[], &dir.join("bridge.log"), &[("ACRES_LINK_TOKEN", "field-secret-42")]);
    for (given, ok) in [(None, false), (Some("field-secret-41"), false), (Some("field-secret-42"), true)] {
        let mut c = Raw::tls(5642, &dir);
        assert!(matches!(c.next(), Some(FromBridge::Hello(h)) if h.token_required));
        match c.attach(link::PROTOCOL_VERSION, given) {
            Some(FromBridge::Welcome(_)) => assert!(ok, "{given:?} must be refused"),
            Some(FromBridge::Refused(r)) => {
                assert!(!ok, "{given:?} must be accepted");
                assert_eq!(r.code, RefusedCode::Token);
                assert!(c.next().is_none(), "closed after a refusal");
            }
            other => panic!("{other:?}"),
        }
        if ok {
            c.send(&FromHarness::End(link::End { cause: "done".into() }));
            assert!(c.next().is_none());
        }
    }
    let log = std::fs::read_to_string(dir.join("bridge.log")).unwrap();
    assert!(!log.contains("field-secret"), "the token is never logged");
    let took = t0.elapsed();
    eprintln!("tokens: {took:?}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_non_loopback_host_needs_a_token_or_allow_insecure() {
    require_netns();
    let t0 = Instant::now();
    let dir = TempDir::new("insecure");
    let log = dir.join("bridge.log");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_acres_bridge"));
    cmd.args(["--ros-args", "-p", "host:=0.0.0.0", "-p", "port:=5643"])
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("ACRES_LINK_TOKEN")
        .stderr(std::fs::File::create(&log).unwrap());
    let mut p = Proc { child: cmd.spawn().unwrap(), name: "bridge" };
    assert_eq!(p.wait(Duration::from_secs(10)), Some(2), "refused with exit code 2");
    assert!(std::fs::read_to_string(&log).unwrap().contains("allow_insecure"));
    // With a token but without TLS, still refused.
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_acres_bridge"));
    cmd.args(["--ros-args", "-p", "host:=0.0.0.0", "-p", "port:=5643", "-p", "tls:=false"])
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ACRES_LINK_TOKEN", "field-secret-43")
        .stderr(std::fs::File::create(&log).unwrap());
    let mut p = Proc { child: cmd.spawn().unwrap(), name: "bridge" };
    assert_eq!(p.wait(Duration::from_secs(10)), Some(2), "plaintext off loopback refused with exit code 2");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("tls is false") && !text.contains("field-secret"), "{text}");
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_goal_string_past_the_limit_is_refused_with_a_short_cause() {
    require_netns();
    let dir = TempDir::new("goal-strings");
    let _bridge = bridge(5644, &[], &dir.join("bridge.log"), &[]);
    let mut c = Raw::tls(5644, &dir);
    assert!(matches!(c.next(), Some(FromBridge::Hello(_))));
    assert!(matches!(c.attach(link::PROTOCOL_VERSION, None), Some(FromBridge::Welcome(_))));
    for (id, len) in [(1u64, 1usize << 20), (2, 60_000), (3, acres_bridge::GOAL_STRING_MAX + 1)] {
        let t0 = Instant::now();
        c.send(&FromHarness::Skill(link::SkillRequest {
            id,
            goal: acres_msgs::acres_interfaces::SkillGoal { skill: "s".repeat(len), ..Default::default() },
        }));
        match c.next() {
            Some(FromBridge::Reply(r)) => {
                assert_eq!(r.id, id);
                assert!(!r.accepted);
                assert_eq!(
                    r.cause,
                    format!(
                        "the goal's skill has {len} bytes, more than the {} allowed",
                        acres_bridge::GOAL_STRING_MAX
                    )
                );
            }
            other => panic!("expected a reply, got {other:?}"),
        }
        eprintln!("a skill name of {len} bytes refused in {:?}", t0.elapsed());
    }
    // Still usable.
    c.send(&FromHarness::Ping(link::Ping { n: 4 }));
    assert!(matches!(c.next(), Some(FromBridge::Pong(p)) if p.n == 4));
    let log = std::fs::read_to_string(dir.join("bridge.log")).unwrap();
    assert!(!log.contains(&"s".repeat(200)), "the long name is not logged");
}

/// The bridge's resident memory now and at its peak, kB.
fn memory_kb(pid: u32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb = |key: &str| -> u64 {
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap()
            .parse()
            .unwrap()
    };
    (kb("VmRSS:"), kb("VmHWM:"))
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_harness_that_stops_reading_is_detached_and_the_bridge_stays_bounded() {
    require_netns();
    let dir = TempDir::new("no-reading");
    let b = bridge(5645, &[], &dir.join("bridge.log"), &[]);
    let mut c = Raw::tls(5645, &dir);
    assert!(matches!(c.next(), Some(FromBridge::Hello(_))));
    assert!(matches!(c.attach(link::PROTOCOL_VERSION, None), Some(FromBridge::Welcome(_))));
    let (rest_kb, _) = memory_kb(b.child.id());
    // Pings and never a read: the pongs pile up at the bridge.
    let t0 = Instant::now();
    let ping = link::encode(&FromHarness::Ping(link::Ping { n: 1 }));
    let batch = ping.repeat(1000);
    c.w.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let (mut sent, mut writing) = (0u64, true);
    let detached = loop {
        if let Ok(log) = std::fs::read_to_string(dir.join("bridge.log")) {
            if log.contains("the harness stopped reading") {
                break true;
            }
        }
        if t0.elapsed() > Duration::from_secs(60) {
            break false;
        }
        // A write that timed out may have cut a TLS record: nothing more is sent after it.
        if writing && c.try_send_raw(batch.as_bytes()) {
            sent += 1000;
        } else {
            writing = false;
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let (_, peak_kb) = memory_kb(b.child.id());
    eprintln!(
        "stopped reading: detached after {:?} and {sent} pings; bridge RSS {rest_kb} kB at rest, peak {peak_kb} kB",
        t0.elapsed()
    );
    assert!(
        detached,
        "not detached; bridge log:\n{}",
        std::fs::read_to_string(dir.join("bridge.log")).unwrap()
    );
    assert!(peak_kb < rest_kb + 64 * 1024, "peak {peak_kb} kB against {rest_kb} kB at rest");
    // The slot is free: a new harness attaches.
    let mut d = Raw::tls(5645, &dir);
    assert!(matches!(d.next(), Some(FromBridge::Hello(_))));
    assert!(matches!(d.attach(link::PROTOCOL_VERSION, None), Some(FromBridge::Welcome(_))));
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn each_sweep_goes_in_its_own_line_stamped_in_the_encoding_asked_with_no_observation() {
    require_netns();
    let t0 = Instant::now();
    let dir = TempDir::new("sweeps");
    let _bridge = bridge(5649, &[], &dir.join("bridge.log"), &[]);
    // The test's own loopback-only node publishes sweeps and never an observation: each sweep
    // must come alone, not with a step.
    let args = acres_ros::RosArgs::parse(["test"], "acres_link_sweep_test").unwrap();
    let env = acres_ros::RosEnv { domain_id: 0, range: acres_ros::env::DiscoveryRange::Localhost };
    let mut node = acres_ros::RosNode::new(args, env).unwrap();
    let points = node
        .publisher::<acres_msgs::sensor_msgs::PointCloud2>("/lidar/points", acres_ros::qos::sensor_data())
        .unwrap();
    let pts: Vec<[f32; 4]> = (0..3000)
        .map(|i| {
            let a = i as f32 * 0.0021;
            [12.0 * a.cos(), 12.0 * a.sin(), -1.5 + (i % 16) as f32 * 0.1234567, 0.2]
        })
        .collect();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (s, p) = (stop.clone(), pts.clone());
    // Stamps 1000.0, 1000.1, …: a sweep's `t_s` must be one of them.
    let publisher = std::thread::spawn(move || {
        let mut k = 0u32;
        while !s.load(std::sync::atomic::Ordering::Relaxed) && k < 600 {
            let stamp = acres_msgs::builtin_interfaces::Time {
                sec: 1000 + (k / 10) as i32,
                nanosec: (k % 10) * 100_000_000,
            };
            let h = acres_msgs::std_msgs::Header { stamp, frame_id: "lidar".into() };
            points.publish(acres_ros::cloud::to_cloud(h, &p));
            k += 1;
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    for enc in link::SweepEncoding::ALL {
        let mut c = Raw::tls(5649, &dir);
        c.sweep_encoding = enc;
        match c.next() {
            Some(FromBridge::Hello(h)) => assert_eq!(h.sweep_encodings, link::SweepEncoding::ALL.to_vec()),
            other => panic!("expected hello, got {other:?}"),
        }
        assert!(matches!(c.attach(link::PROTOCOL_VERSION, None), Some(FromBridge::Welcome(_))));
        for _ in 0..3 {
            let sw = c.next_sweep().expect("a sweep line within 5 s");
            assert_eq!((sw.encoding, sw.points), (enc, 3000));
            let tenths = (sw.t_s - 1000.0) * 10.0;
            assert!((tenths - tenths.round()).abs() < 1e-5, "stamped with its cloud's stamp: {}", sw.t_s);
            let back = sw.unpack().unwrap();
            for (a, b) in pts.iter().zip(&back) {
                for k in 0..4 {
                    if enc.lossless() || k == 3 {
                        assert_eq!(a[k].to_bits(), b[k].to_bits(), "{enc}");
                    } else {
                        assert!((a[k] - b[k]).abs() <= 0.0005 + 1e-5, "{enc}: {a:?} {b:?}");
                    }
                }
            }
        }
        c.send(&FromHarness::End(link::End { cause: "done".into() }));
        while c.next_sweep().is_some() {}
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    publisher.join().unwrap();
    eprintln!("sweep lines in three encodings took {:?}", t0.elapsed());
    assert!(t0.elapsed() < Duration::from_secs(60));
}
