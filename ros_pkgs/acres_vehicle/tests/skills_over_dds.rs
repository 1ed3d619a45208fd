//! The core node and the vehicle node as real processes over real DDS (loopback, private
//! network namespace): goals on `/acres/skill` from a test client, cancel, rejection, the
//! odometry fail-safe, and the shield; the heartbeat deadman in `deadman` (`Beater` beats for
//! the tests whose goals must run).

#[path = "skills_over_dds/deadman.rs"]
mod deadman;
mod util;

use std::time::Duration;

use acres_msgs::geometry_msgs::{Twist, Vector3};
use acres_msgs::nav_msgs::Odometry;
use util::*;

const ONE_FIELD: &str = "t1_01_one_field";

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_goal_drives_to_a_field_and_scouts_it() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let _core = core_node(11, &sc, 40.0, &[]);
    let _veh = vehicle_node(11, &sc, &[]);
    let mut c = Client::new(11, "fastrtps");
    let _beats = Beater::start(11);
    c.wait_for_odometry(Duration::from_secs(20));
    for (skill, field) in [("goto", "F53"), ("scout", "F53")] {
        let (g, accepted) = c.skill.send(goal(skill, field), Duration::from_secs(5)).unwrap();
        assert_eq!(accepted, Some(true), "{skill} {field} accepted");
        let fb =
            poll(Duration::from_secs(10), || c.skill.feedback(g)).expect("feedback while the skill runs");
        assert!((0.0..=1.0).contains(&fb.progress) && !fb.state.is_empty(), "{fb:?}");
        let out = c.skill.result(g, Duration::from_secs(120)).unwrap().expect("a result");
        assert_eq!(out.status, "succeeded", "{skill}: {out:?}");
        assert_eq!(out.result.code, "succeeded");
        assert!(out.result.skill_id > 0);
    }
    assert!(
        c.seen_event(Duration::from_secs(5), "field_scouted", |e| e.field == "F53").is_some(),
        "field_scouted F53 on /acres/events"
    );
    let scouted = poll(Duration::from_secs(5), || {
        c.pump();
        c.last_obs.as_ref().filter(|o| o.scouted.contains(&"F53".to_string())).cloned()
    });
    assert!(scouted.is_some(), "F53 scouted in /acres/observation: {:?}", c.last_obs);
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_cancel_stops_the_vehicle() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let _core = core_node(12, &sc, 5.0, &[]);
    let _veh = vehicle_node(12, &sc, &[]);
    let mut c = Client::new(12, "fastrtps");
    let _beats = Beater::start(12);
    c.wait_for_odometry(Duration::from_secs(20));
    let (g, accepted) = c.skill.send(goal("goto", "F53"), Duration::from_secs(5)).unwrap();
    assert_eq!(accepted, Some(true));
    let moving = poll(Duration::from_secs(30), || {
        c.pump();
        c.last_obs.as_ref().filter(|o| o.speed_mps > 1.0).cloned()
    });
    assert!(moving.is_some(), "the vehicle drives");
    assert!(c.skill.cancel(g, Duration::from_secs(5)).unwrap(), "the server cancels the goal");
    let out = c.skill.result(g, Duration::from_secs(10)).unwrap().expect("a result");
    assert_eq!(out.status, "canceled");
    assert_eq!(out.result.code, "stopped");
    let stopped = poll(Duration::from_secs(30), || {
        c.pump();
        c.last_obs.as_ref().filter(|o| o.speed_mps.abs() < 0.05 && o.skill.is_empty()).cloned()
    });
    assert!(stopped.is_some(), "the vehicle stands still after the cancel: {:?}", c.last_obs);
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_rejected_goal_names_its_cause() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let _core = core_node(13, &sc, 1.0, &[]);
    let _veh = vehicle_node(13, &sc, &[]);
    let mut c = Client::new(13, "fastrtps");
    c.wait_for_odometry(Duration::from_secs(20));
    for (g, words) in [
        (goal("scout", "F53"), "not at the entry of F53"),
        (goal("goto", "F99"), "unknown place \"F99\""),
        (goal("fly", ""), "unknown skill \"fly\""),
    ] {
        let skill = g.skill.clone();
        let (sent, accepted) = c.skill.send(g, Duration::from_secs(5)).unwrap();
        assert_eq!(accepted, Some(false), "{skill} is rejected");
        let e = c
            .wait_event(Duration::from_secs(5), "skill_rejected", |_| true)
            .expect("skill_rejected on /acres/events");
        assert_eq!(e.code, "rejected");
        assert!(e.cause.contains(words), "cause {:?} names {words:?}", e.cause);
        let out = c.skill.result(sent, Duration::from_secs(5)).unwrap();
        if nodes_backend() == "r2r" || acres_ros::BACKEND == "r2r" {
            // An r2r node's rcl_action never accepted the goal, so it keeps no result to ask for;
            // an r2r client gets no goal handle for a rejected goal, so it cannot ask (docs/ros.md).
            // The cause travels on /acres/events alone then (checked above).
            assert!(out.is_none(), "a result of a rejected goal on r2r: {out:?}");
            continue;
        }
        let out = out.expect("the result of a rejected goal");
        assert_eq!(out.result.code, "rejected");
        assert!(out.result.cause.contains(words));
    }
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_killed_core_node_ends_the_skill_and_commands_a_stop() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let mut core = core_node(15, &sc, 2.0, &[]);
    let _veh = vehicle_node(15, &sc, &["odom_timeout_s:=0.5"]);
    let mut c = Client::new(15, "fastrtps");
    let _beats = Beater::start(15);
    c.wait_for_odometry(Duration::from_secs(20));
    let (g, accepted) = c.skill.send(goal("goto", "F53"), Duration::from_secs(5)).unwrap();
    assert_eq!(accepted, Some(true));
    let moving = poll(Duration::from_secs(30), || {
        c.pump();
        c.last_obs.as_ref().filter(|o| o.speed_mps > 0.5).cloned()
    });
    assert!(moving.is_some(), "the vehicle drives");
    core.kill();
    let e = c.wait_event(Duration::from_secs(5), "skill_ended", |_| true).expect("the skill ends");
    assert_eq!(e.code, "failed");
    assert!(e.cause.contains("odometry stopped"), "{:?}", e.cause);
    let out = c.skill.result(g, Duration::from_secs(5)).unwrap().expect("a result");
    assert_eq!((out.status.as_str(), out.result.code.as_str()), ("aborted", "failed"));
    // The node keeps commanding a stop.
    while c.cmd_vel.take().is_some() {}
    let zero = poll(Duration::from_secs(2), || c.cmd_vel.take()).expect("a /cmd_vel after the loss");
    assert_eq!((zero.linear.x, zero.angular.z), (0.0, 0.0));
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn an_object_on_the_route_holds_then_blocks() {
    require_netns();
    let sc = scenario("t2_06_truck_on_the_lane");
    let _core = core_node(16, &sc, 20.0, &[]);
    let _veh = vehicle_node(16, &sc, &["blocked_s:=5.0"]);
    let mut c = Client::new(16, "fastrtps");
    let _beats = Beater::start(16);
    c.wait_for_odometry(Duration::from_secs(20));
    let (g, accepted) = c.skill.send(goal("goto", "F55"), Duration::from_secs(5)).unwrap();
    assert_eq!(accepted, Some(true));
    let hold = c.wait_event(Duration::from_secs(60), "shield_hold", |_| true).expect("the shield holds");
    assert!(hold.ahead_m < hold.stopping_m, "{hold:?}");
    let out = c.skill.result(g, Duration::from_secs(30)).unwrap().expect("a result");
    assert_eq!(out.result.code, "blocked", "{out:?}");
    assert!(out.result.cause.contains("the shield held the vehicle for 5 s"), "{:?}", out.result.cause);
    let ended = c.seen_event(Duration::from_secs(5), "skill_ended", |_| true).expect("skill_ended");
    assert!(
        ended.header.stamp.sec as f64 - hold.header.stamp.sec as f64 >= 4.0,
        "blocked after blocked_s of simulated time"
    );
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn nodes_stop_cleanly_on_sigint() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let mut core = core_node(17, &sc, 1.0, &[]);
    let mut veh = vehicle_node(17, &sc, &[]);
    let mut c = Client::new(17, "fastrtps");
    c.wait_for_odometry(Duration::from_secs(20));
    assert_eq!(veh.interrupt(Duration::from_secs(10)), Some(0), "vehicle node exit code on SIGINT");
    assert_eq!(
        {
            core.signal("-TERM");
            core.wait(Duration::from_secs(10))
        },
        Some(0),
        "core node exit code on SIGTERM"
    );
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn the_core_node_drives_on_fresh_commands_and_stops_on_stale_ones() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let _core = core_node(18, &sc, 1.0, &["cmd_timeout_s:=0.5"]);
    let mut c = Client::new_plain(18);
    let cmd = c.node.publisher::<Twist>("/cmd_vel", acres_ros::qos::default_profile()).unwrap();
    let odom = c.node.subscription::<Odometry>("/odom", acres_ros::qos::default_profile()).unwrap();
    let drive =
        Twist { linear: Vector3 { x: 3.0, y: 0.0, z: 0.0 }, angular: Vector3 { x: 0.0, y: 0.0, z: 0.0 } };
    // Fresh commands every 0.1 s: the vehicle speeds up.
    let moving = poll(Duration::from_secs(20), || {
        cmd.publish(drive);
        std::thread::sleep(Duration::from_millis(100));
        odom.latest().filter(|o| o.twist.twist.linear.x > 1.0)
    });
    assert!(moving.is_some(), "fresh /cmd_vel drives the vehicle");
    // No more commands: after cmd_timeout_s the core stops the vehicle by itself.
    let stopped =
        poll(Duration::from_secs(15), || odom.latest().filter(|o| o.twist.twist.linear.x.abs() < 0.01));
    assert!(stopped.is_some(), "stale /cmd_vel stops the vehicle");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_use_sim_time_node_follows_the_core_clock() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let _core = core_node(19, &sc, 4.0, &[]);
    let args =
        acres_ros::RosArgs::parse(["t", "--ros-args", "-p", "use_sim_time:=true"], "clock_reader").unwrap();
    let env = acres_ros::RosEnv { domain_id: 19, range: acres_ros::env::DiscoveryRange::Localhost };
    let node = acres_ros::RosNode::new(args, env).unwrap();
    assert!(node.sim_time());
    let t1 =
        poll(Duration::from_secs(20), || Some(node.now_s()).filter(|t| *t > 0.0)).expect("/clock arrives");
    std::thread::sleep(Duration::from_secs(1));
    let t2 = node.now_s();
    // Simulated time: starts near 0 (not the wall clock) and runs at about `rate` × wall time.
    assert!(t1 < 1e6, "simulated, not wall time: {t1}");
    assert!((t2 - t1) > 2.0 && (t2 - t1) < 6.0, "4 simulated s per wall s: {t1} -> {t2}");
}

#[test]
#[ignore = "needs a private network namespace: run by tools/test.sh under unshare -n"]
fn a_namespace_moves_the_topics_and_observe_only_drives_nothing() {
    require_netns();
    let sc = scenario(ONE_FIELD);
    let _core = core_node(20, &sc, 2.0, &["__ns:=/robot1"]);
    let _veh = vehicle_node(20, &sc, &["__ns:=/robot1", "skills:=false"]);
    let mut c = Client::new_plain(20);
    let odom = c.node.subscription::<Odometry>("/robot1/odom", acres_ros::qos::default_profile()).unwrap();
    let obs = c
        .node
        .subscription::<acres_msgs::acres_interfaces::Observation>(
            "/robot1/acres/observation",
            acres_ros::qos::default_profile(),
        )
        .unwrap();
    let cmd = c.node.subscription::<Twist>("/robot1/cmd_vel", acres_ros::qos::default_profile()).unwrap();
    assert!(poll(Duration::from_secs(20), || odom.take()).is_some(), "/robot1/odom");
    let o = poll(Duration::from_secs(20), || obs.take()).expect("/robot1/acres/observation");
    assert_eq!(o.state, "idle");
    // Nothing on the un-namespaced topics, and skills:=false never commands the vehicle.
    c.pump();
    assert!(c.last_obs.is_none(), "/acres/observation stays empty");
    std::thread::sleep(Duration::from_secs(1));
    assert!(cmd.take().is_none(), "an observe-only node publishes no /cmd_vel");
}
