//! The heartbeat deadman of the vehicle node with real processes over DDS: every accepted goal
//! arms it (a goal with no beat at all is held, then stopped, also after a run has ended);
//! missing beats hold the vehicle (`link_hold`), beats back within the grace let the skill go on
//! (`link_release` with the held time), past the grace `on_cancel` applies; and the time from
//! the last beat to standstill, measured over 20 stalls.

use std::time::{Duration, Instant};

use acres_msgs::acres_interfaces::SkillGoal;

use super::util::*;

const ONE_FIELD: &str = "t1_01_one_field";

/// Held after 0.5 s without a beat, `on_cancel` after 1.5 s.
const DEADMAN: [&str; 2] = ["heartbeat_timeout_s:=0.5", "heartbeat_grace_s:=1.5"];

/// Beats every 0.1 s until `done` (or `timeout`); the instant of the last beat.
fn beat_until(c: &mut Client, timeout: Duration, mut done: impl FnMut(&Client) -> bool) -> Instant {
    let until = Instant::now() + timeout;
    loop {
        c.beat();
        let last = Instant::now();
        std::thread::sleep(Duration::from_millis(100));
        c.pump();
        if done(c) || Instant::now() > until {
            return last;
        }
    }
}

fn speed(c: &Client) -> f64 {
    c.last_obs.as_ref().map_or(0.0, |o| o.speed_mps.abs())
}

fn place(skill: &str, place: &str) -> SkillGoal {
    SkillGoal { place: place.into(), ..goal(skill, "") }
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_goal_with_no_beat_is_held_then_stopped_also_after_a_run_ended() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let _core = core_node(14, &sc, 1.0, &[]);
    let _veh = vehicle_node(14, &sc, &[DEADMAN[0], DEADMAN[1], "on_cancel:=stop"]);
    let mut c = Client::new(14, "fastrtps");
    c.wait_for_odometry(Duration::from_secs(20));
    // A first run with beats ends (a 1 s wait); then the beats stop while idle.
    let (g, accepted) =
        c.skill.send(SkillGoal { seconds: 1.0, ..goal("wait", "") }, Duration::from_secs(5)).unwrap();
    assert_eq!(accepted, Some(true));
    beat_until(&mut c, Duration::from_secs(10), |c| c.seen.iter().any(|e| e.event == "skill_ended"));
    let out = c.skill.result(g, Duration::from_secs(5)).unwrap().expect("the wait's result");
    assert_eq!(out.result.code, "succeeded");
    std::thread::sleep(Duration::from_secs(2));
    // A goal and never a beat.
    let (g, accepted) = c.skill.send(goal("goto", "F53"), Duration::from_secs(5)).unwrap();
    let sent = Instant::now();
    assert_eq!(accepted, Some(true));
    let mut top = 0.0f64;
    let hold = poll(Duration::from_secs(5), || {
        c.pump();
        top = top.max(speed(&c));
        c.seen.iter().find(|e| e.event == "link_hold").cloned()
    })
    .expect("link_hold: the goal with no beat is held");
    let held_after = sent.elapsed().as_secs_f64();
    assert!(hold.cause.contains("no heartbeat for 0.5 s"), "{:?}", hold.cause);
    let end = c.wait_event(Duration::from_secs(5), "skill_ended", |_| true).expect("the skill ends");
    let ended_after = sent.elapsed().as_secs_f64();
    assert_eq!(end.code, "stopped");
    assert!(end.cause.contains("heartbeat lost for 1.5 s"), "{:?}", end.cause);
    let out = c.skill.result(g, Duration::from_secs(5)).unwrap().expect("the goto's result");
    assert_eq!((out.status.as_str(), out.result.code.as_str()), ("aborted", "stopped"));
    let still = poll(Duration::from_secs(10), || {
        c.pump();
        top = top.max(speed(&c));
        (speed(&c) < 0.05).then_some(())
    });
    eprintln!(
        "no beat at all: held {held_after:.3} s after the acceptance, stopped {ended_after:.3} s after; top speed {top:.2} m/s"
    );
    assert!(still.is_some(), "the vehicle stands");
    assert!(held_after <= 0.5 + 0.4, "held {held_after:.3} s after the acceptance (timeout 0.5 s)");
    assert!((1.4..=1.5 + 0.5).contains(&ended_after), "on_cancel {ended_after:.3} s after the acceptance");
    assert!(top < 1.5, "the vehicle drove {top:.2} m/s with no beat");
    assert!(
        c.seen.iter().any(|e| e.event == "link_release" && e.why == "the skill ended"),
        "every link_hold has its link_release: {:?}",
        c.seen.iter().map(|e| &e.event).collect::<Vec<_>>()
    );
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_stall_shorter_than_the_grace_holds_then_the_skill_succeeds() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let _core = core_node(22, &sc, 4.0, &[]);
    let _veh = vehicle_node(22, &sc, &DEADMAN);
    let mut c = Client::new(22, "fastrtps");
    c.wait_for_odometry(Duration::from_secs(20));
    let (g, accepted) = c.skill.send(goal("goto", "F53"), Duration::from_secs(5)).unwrap();
    assert_eq!(accepted, Some(true));
    // The beater that ends the stall is discovered before it (a new participant can take longer
    // than the grace's margin to be matched, on r2r clients above all).
    let beats = Beater::start_paused(22);
    beat_until(&mut c, Duration::from_secs(30), |c| speed(c) > 2.0);
    // A stall of 1.0 s: past the timeout (0.5 s), within the grace (1.5 s).
    std::thread::sleep(Duration::from_millis(1000));
    c.pump();
    assert!(c.seen.iter().any(|e| e.event == "link_hold"), "held during the stall");
    let slow = speed(&c);
    beats.resume();
    let rel = c
        .wait_event(Duration::from_secs(3), "link_release", |_| true)
        .or_else(|| c.seen.iter().find(|e| e.event == "link_release").cloned());
    let rel = rel.expect("link_release when the beats return");
    assert_eq!(rel.why, "heartbeats returned");
    // Held about 0.5 s of wall time at 4 × real time: about 2 s of mission time.
    assert!((0.5..=4.0).contains(&rel.held_s), "held_s {} (mission time)", rel.held_s);
    let out = c.skill.result(g, Duration::from_secs(120)).unwrap().expect("the goto's result");
    eprintln!(
        "a 1.0 s stall: speed {slow:.2} m/s at its end, held {:.2} s of mission time; {out:?}",
        rel.held_s
    );
    assert_eq!(out.result.code, "succeeded", "{out:?}");
    assert!(!c.seen.iter().any(|e| e.event == "skill_ended" && e.code == "stopped"));
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_stall_past_the_grace_applies_on_cancel_and_return_home_runs_on() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let _core = core_node(23, &sc, 1.0, &[]);
    let _veh = vehicle_node(23, &sc, &[DEADMAN[0], DEADMAN[1], "on_cancel:=return_home"]);
    let mut c = Client::new(23, "fastrtps");
    c.wait_for_odometry(Duration::from_secs(20));
    let (g, accepted) = c.skill.send(goal("goto", "F53"), Duration::from_secs(5)).unwrap();
    assert_eq!(accepted, Some(true));
    let last_beat = beat_until(&mut c, Duration::from_secs(2), |_| false);
    assert!(!c.seen.iter().any(|e| e.event == "skill_ended" || e.event == "link_hold"), "{:?}", c.seen);
    let hold = c.wait_event(Duration::from_secs(5), "link_hold", |_| true).expect("held");
    let held_s = last_beat.elapsed().as_secs_f64();
    let e = c.wait_event(Duration::from_secs(5), "skill_ended", |_| true).expect("the skill ends");
    let after_s = last_beat.elapsed().as_secs_f64();
    eprintln!("silence: held after {held_s:.3} s, on_cancel after {after_s:.3} s (timeout 0.5, grace 1.5)");
    assert!(hold.cause.contains("grace 1.5 s"), "{:?}", hold.cause);
    assert!((0.5..=0.5 + 0.3).contains(&held_s), "held after {held_s:.3} s");
    assert_eq!(e.code, "stopped");
    assert!(e.cause.contains("heartbeat lost for 1.5 s"), "{:?}", e.cause);
    assert!((1.5..=1.5 + 0.3).contains(&after_s), "on_cancel after {after_s:.3} s");
    let out = c.skill.result(g, Duration::from_secs(5)).unwrap().expect("a result");
    assert_eq!((out.status.as_str(), out.result.code.as_str()), ("aborted", "stopped"));
    // on_cancel return_home: it starts and runs on by itself, never held (not a goal's skill).
    let home = c.seen_event(Duration::from_secs(5), "skill_started", |e| e.skill == "return_home");
    assert!(home.is_some(), "return_home starts");
    std::thread::sleep(Duration::from_secs(2));
    c.pump();
    assert_eq!(c.seen.iter().filter(|e| e.event == "link_hold").count(), 1, "return_home is not held");
    assert_eq!(c.last_obs.as_ref().map(|o| o.skill.as_str()), Some("return_home"));
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn the_last_beat_to_standstill_p99_of_20_stalls() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    // The defaults (timeout 1.0 s, grace 3.0 s) at real time, as on a field.
    let _core = core_node(24, &sc, 1.0, &[]);
    let _veh = vehicle_node(24, &sc, &[]);
    let mut c = Client::new(24, "fastrtps");
    c.wait_for_odometry(Duration::from_secs(20));
    let targets = [goal("goto", "F53"), place("goto", "H")];
    let mut next = 0;
    let mut took = Vec::new();
    let mut speeds = Vec::new();
    while took.len() < 20 {
        c.pump();
        if c.last_obs.as_ref().is_some_and(|o| o.skill.is_empty()) {
            let (_g, accepted) = c.skill.send(targets[next % 2].clone(), Duration::from_secs(5)).unwrap();
            assert_eq!(accepted, Some(true), "goal {next}");
            next += 1;
        }
        let last = beat_until(&mut c, Duration::from_secs(30), |c| {
            speed(c) > 3.0 || c.last_obs.as_ref().is_some_and(|o| o.skill.is_empty())
        });
        if speed(&c) <= 3.0 {
            continue; // the motion ended before it was fast: the next goal
        }
        speeds.push(speed(&c));
        let still = poll(Duration::from_secs(8), || {
            c.pump();
            (speed(&c) < 0.05).then(|| last.elapsed().as_secs_f64())
        });
        took.push(still.expect("the vehicle stands after the beats stop"));
        let ended = c.seen.iter().any(|e| e.event == "skill_ended" && e.code == "stopped");
        assert!(!ended, "a stall under the grace ended the skill: {:?}", c.seen.last());
    }
    took.sort_by(f64::total_cmp);
    let p99 = took[((took.len() as f64) * 0.99).ceil() as usize - 1];
    let top = speeds.iter().copied().fold(0.0, f64::max);
    eprintln!(
        "last beat → standstill over 20 stalls (speeds up to {top:.2} m/s): min {:.3} s, median {:.3} s, p99 {p99:.3} s",
        took[0],
        took[took.len() / 2]
    );
    // 1.0 s of silence, then braking at 3 m/s² from at most about 5 m/s (1.7 s).
    assert!(took[0] >= 1.0, "standstill before the timeout: {took:?}");
    assert!(p99 <= 1.0 + 1.7 + 0.5, "p99 {p99:.3} s");
}
