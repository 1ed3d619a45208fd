"""The vehicle node (RustDDS) driven by rclpy on rmw_fastrtps_cpp with the rosidl-generated
acres_interfaces types: /acres/skill through an rclpy ActionClient (goto with feedback, scout,
wait, cancel, a second goal, an unknown skill, a route out of the corridor), the heartbeat
deadman (held, then on_cancel past the grace), /acres/observation and /acres/events, --params-file, -r __ns:= and use_sim_time with
a /clock from rclpy."""

import math
import time

from action_msgs.msg import GoalStatus
from conftest import ONE_FIELD, Latest, stamp_s
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.action import ActionClient
from rclpy.action.graph import get_action_names_and_types
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from acres_interfaces.action import Skill
from acres_interfaces.msg import Heartbeat, Observation, SkillEvent

RELIABLE = QoSProfile(depth=10)
NAN = float("nan")


def goal(skill, place="", field="", seconds=NAN, speed_cap_mps=NAN):
    g = Skill.Goal()
    g.skill, g.place, g.field, g.seconds, g.speed_cap_mps = skill, place, field, seconds, speed_cap_mps
    return g


class Vehicle:
    """The rclpy side of a vehicle node: the action client and the vehicle's topics."""

    def __init__(self, p, ns=""):
        self.p = p
        n = p.node
        self.skill = ActionClient(n, Skill, f"{ns}/acres/skill")
        self.obs = Latest(n, Observation, f"{ns}/acres/observation", RELIABLE)
        self.events = Latest(n, SkillEvent, f"{ns}/acres/events", RELIABLE)
        self.cmd_vel = Latest(n, Twist, f"{ns}/cmd_vel", RELIABLE)
        self.beat_pub = n.create_publisher(Heartbeat, f"{ns}/acres/skill/heartbeat", RELIABLE)
        self.seq = 0
        self.feedback = []

    def ready(self, timeout_s=30):
        self.p.spin_until(self.skill.server_is_ready, timeout_s, "the /acres/skill server is discovered")
        self.p.spin_until(lambda: self.obs.msgs, timeout_s, "/acres/observation (the node has odometry)")

    def send(self, g, timeout_s=10):
        fut = self.skill.send_goal_async(g, feedback_callback=lambda m: self.feedback.append(m.feedback))
        return self.p.future(fut, timeout_s, f"the answer to {g.skill}")

    def result(self, handle, timeout_s):
        return self.p.future(handle.get_result_async(), timeout_s, "the result")

    def event(self, name, since=0, timeout_s=10, pred=lambda e: True):
        def found():
            return next((e for e in self.events.msgs[since:] if e.event == name and pred(e)), None)

        return self.p.spin_until(found, timeout_s, f"{name} on /acres/events")

    def beat(self):
        self.seq += 1
        hb = Heartbeat()
        hb.stamp = self.p.node.get_clock().now().to_msg()
        hb.seq, hb.sender = self.seq, "rclpy"
        self.beat_pub.publish(hb)

    def keep_beating(self):
        """Beats every 0.1 s while the node spins: the deadman holds a goal without beats."""
        self.beater = self.p.node.create_timer(0.1, self.beat)


def start_stack(nodes, domain, rate, *vehicle_args):
    core = nodes("core", domain, "-p", f"scenario:={ONE_FIELD}", "-p", f"rate:={rate}")
    veh = nodes("vehicle", domain, "-p", f"scenario:={ONE_FIELD}", "-p", "use_sim_time:=true", *vehicle_args)
    return core, veh


def test_observation_and_events_read_right(nodes, peer):
    _, veh = start_stack(nodes, 41, 4.0)
    p = peer(41)
    v = Vehicle(p)
    v.ready()
    assert veh.running(), veh.output()
    n = p.node
    # The graph fills as discovery goes on: wait for the vehicle node's endpoints in it.
    p.spin_until(lambda: ("acres_vehicle", "/") in n.get_node_names_and_namespaces(), 10, "the node in the graph")
    p.spin_until(
        lambda: [i for i in n.get_publishers_info_by_topic("/acres/events") if i.node_name == "acres_vehicle"],
        10,
        "the vehicle node's /acres/events publisher",
    )
    types = dict(n.get_topic_names_and_types())
    assert types["/acres/observation"] == ["acres_interfaces/msg/Observation"]
    assert types["/acres/events"] == ["acres_interfaces/msg/SkillEvent"]
    assert types["/acres/skill/heartbeat"] == ["acres_interfaces/msg/Heartbeat"]
    actions = get_action_names_and_types(n)
    assert ("/acres/skill", ["acres_interfaces/action/Skill"]) in actions, actions
    for topic in ["/acres/observation", "/acres/events", "/cmd_vel"]:
        infos = [i for i in n.get_publishers_info_by_topic(topic) if i.node_name == "acres_vehicle"]
        assert len(infos) == 1, (topic, infos)
        q = infos[0].qos_profile
        assert (q.reliability, q.durability) == (ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE), topic
    status = [i for i in n.get_publishers_info_by_topic("/acres/skill/_action/status")]
    assert status and status[0].qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL, status
    subs = {i.node_name: i for i in n.get_subscriptions_info_by_topic("/lidar/points")}
    assert subs["acres_vehicle"].qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT

    p.spin_until(lambda: len(v.obs.msgs) >= 10, 10, "ten observations")
    o = v.obs.last
    assert o.header.frame_id == "map"
    assert 0.0 <= stamp_s(o.header.stamp) < 1e6, "mission time on the simulation clock"
    assert math.hypot(o.x_m, o.y_m) < 1.0, "at home (0, 0)"
    assert abs(o.speed_mps) < 1e-6 and o.odom_m < 0.01
    assert (o.skill, o.skill_id, o.state, o.target) == ("", 0, "idle", "")
    assert math.isnan(o.remaining_m) and math.isnan(o.hold_since_s) and not o.shield_holding
    assert o.ahead_m > 0.0, "no obstacle at home (+inf when clear)"
    assert [c.field for c in o.coverage] == sorted(c.field for c in o.coverage)
    assert list(o.scouted) == [] and list(o.route_ahead) == []
    stamps = [stamp_s(m.header.stamp) for m in v.obs.msgs]
    assert all(b >= a for a, b in zip(stamps, stamps[1:])), "observations in time order"
    # The idle node commands standing still on /cmd_vel.
    p.spin_until(lambda: v.cmd_vel.msgs, 10, "/cmd_vel from the vehicle node")
    assert (v.cmd_vel.last.linear.x, v.cmd_vel.last.angular.z) == (0.0, 0.0)


def test_goto_with_feedback_then_scout_then_wait(nodes, peer):
    start_stack(nodes, 42, 40.0)
    p = peer(42)
    v = Vehicle(p)
    v.keep_beating()
    v.ready()
    h = v.send(goal("goto", field="F53"))
    assert h.accepted, "goto F53 accepted"
    p.spin_until(lambda: v.obs.last.skill == "goto", 10, "the observation shows the goto")
    assert v.obs.last.target == "F53" and v.obs.last.skill_id > 0
    r = v.result(h, 120)
    assert r.status == GoalStatus.STATUS_SUCCEEDED, r
    assert (r.result.code, r.result.skill_id > 0) == ("succeeded", True), r.result
    assert v.feedback, "feedback while the goto ran"
    for f in v.feedback:
        assert 0.0 <= f.progress <= 1.0 and f.state in ("running", "holding"), f
    assert [f.progress for f in v.feedback] == sorted(f.progress for f in v.feedback), "progress rises"
    assert any(not math.isnan(f.remaining_m) and f.remaining_m > 0 for f in v.feedback)
    started = v.event("skill_started", pred=lambda e: e.skill == "goto")
    assert started.target == "F53" and started.route_m > 0.0, started
    ended = v.event("skill_ended", pred=lambda e: e.skill_id == r.result.skill_id)
    assert ended.code == "succeeded"
    moved = v.obs.last.odom_m
    assert moved > 50.0, f"it drove to F53: {moved} m"

    h = v.send(goal("scout", field="F53"))
    assert h.accepted, "scout F53 accepted at the field's entry"
    r = v.result(h, 180)
    assert (r.status, r.result.code) == (GoalStatus.STATUS_SUCCEEDED, "succeeded"), r
    v.event("field_scouted", pred=lambda e: e.field == "F53")
    p.spin_until(lambda: "F53" in v.obs.last.scouted, 5, "F53 in the observation's scouted")
    cov = {c.field: c for c in v.obs.last.coverage}
    assert "F53" in cov, v.obs.last.coverage

    n0 = len(v.obs.msgs)
    h = v.send(goal("wait", seconds=20.0))
    assert h.accepted
    r = v.result(h, 30)
    assert (r.status, r.result.code) == (GoalStatus.STATUS_SUCCEEDED, "succeeded"), r
    waited = [m for m in v.obs.msgs[n0:] if m.skill == "wait"]
    assert waited, "the observation shows the wait"
    # Mission time from the wait's start to its end, by its events (a few reliable samples: none
    # is dropped, where a loaded rclpy may drop observations at 40x from its depth-10 queue).
    began = v.event("skill_started", pred=lambda e: e.skill == "wait")
    ended = v.event("skill_ended", pred=lambda e: e.skill_id == r.result.skill_id)
    span = stamp_s(ended.header.stamp) - stamp_s(began.header.stamp)
    assert 19.9 <= span <= 20.2, f"20 s of mission time waited: {span}"
    assert all(abs(m.speed_mps) < 0.05 for m in waited), "standing still while waiting"


def test_a_cancel_stops_the_vehicle(nodes, peer):
    start_stack(nodes, 43, 5.0)
    p = peer(43)
    v = Vehicle(p)
    v.keep_beating()
    v.ready()
    h = v.send(goal("goto", field="F53"))
    assert h.accepted
    p.spin_until(lambda: v.obs.last.speed_mps > 1.0, 30, "the vehicle drives")
    cancel = p.future(h.cancel_goal_async(), 10, "the cancel's answer")
    assert [g.goal_id.uuid.tobytes() for g in cancel.goals_canceling] == [h.goal_id.uuid.tobytes()]
    r = v.result(h, 10)
    assert (r.status, r.result.code) == (GoalStatus.STATUS_CANCELED, "stopped"), r
    assert "goal cancelled" in v.event("skill_ended").cause
    stopped = p.spin_until(
        lambda: abs(v.obs.last.speed_mps) < 0.05 and v.obs.last.skill == "" and v.obs.last,
        30,
        "the vehicle stands still after the cancel",
    )
    # And stays: no motion after the stop.
    n0 = len(v.obs.msgs)
    p.spin_for(1.0)
    assert all(abs(m.speed_mps) < 0.05 for m in v.obs.msgs[n0:]), "it stays stopped"
    assert abs(v.obs.last.odom_m - stopped.odom_m) < 0.05


def test_a_second_goal_while_one_runs_is_rejected_busy(nodes, peer):
    start_stack(nodes, 44, 2.0)
    p = peer(44)
    v = Vehicle(p)
    v.keep_beating()
    v.ready()
    first = v.send(goal("goto", field="F53"))
    assert first.accepted
    since = len(v.events.msgs)
    second = v.send(goal("goto", field="F55"))
    assert not second.accepted, "a second goal while the goto runs"
    e = v.event("skill_rejected", since=since)
    assert e.code == "rejected" and e.cause.startswith("busy: goto #"), e.cause
    p.spin_until(lambda: v.obs.last.skill == "goto" and v.obs.last.target == "F53", 5, "the first goal runs on")


def test_an_unknown_skill_is_rejected_with_its_cause(nodes, peer):
    start_stack(nodes, 45, 1.0)
    p = peer(45)
    v = Vehicle(p)
    v.ready()
    h = v.send(goal("fly"))
    assert not h.accepted
    e = v.event("skill_rejected")
    assert e.code == "rejected" and 'unknown skill "fly"' in e.cause, e.cause
    assert v.obs.last.state == "idle"


def test_a_route_out_of_the_corridor_is_rejected_with_its_cause(nodes, peer):
    # No core node: rclpy is the odometry source and the clock, placing the vehicle off the map,
    # north of H, where the way to the nearest lane crosses open country.
    veh = nodes("vehicle", 46, "-p", f"scenario:={ONE_FIELD}", "-p", "use_sim_time:=true")
    p = peer(46)
    clock_pub = p.node.create_publisher(Clock, "/clock", QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    odom_pub = p.node.create_publisher(Odometry, "/odom", RELIABLE)
    t = [1000.0]

    def tick():
        t[0] += 0.05
        c = Clock()
        c.clock.sec, c.clock.nanosec = int(t[0]), int((t[0] % 1) * 1e9)
        clock_pub.publish(c)
        o = Odometry()
        o.header.stamp = c.clock
        o.header.frame_id, o.child_frame_id = "odom", "base_link"
        o.pose.pose.position.x, o.pose.pose.position.y = 40.0, 25.0
        o.pose.pose.orientation.w = 1.0
        odom_pub.publish(o)

    p.node.create_timer(0.05, tick)
    v = Vehicle(p)
    v.ready()
    o = v.obs.last
    assert (round(o.x_m, 3), round(o.y_m, 3)) == (40.0, 25.0), "the vehicle node took rclpy's /odom"
    # use_sim_time: the observation is stamped with rclpy's /clock (1000 s on), not the wall clock.
    assert 1000.0 < stamp_s(o.header.stamp) < 2000.0, stamp_s(o.header.stamp)
    h = v.send(goal("goto", field="F53"))
    assert not h.accepted
    e = v.event("skill_rejected")
    assert e.cause.startswith("the route leaves the corridor at ("), e.cause
    assert veh.running()


def beats_then_silence(nodes, peer, domain, on_cancel):
    start_stack(
        nodes, domain, 1.0, "-p", "heartbeat_timeout_s:=0.5", "-p", "heartbeat_grace_s:=1.0", "-p", f"on_cancel:={on_cancel}"
    )
    p = peer(domain)
    v = Vehicle(p)
    v.ready()
    h = v.send(goal("goto", field="F53"))
    assert h.accepted
    p.node.create_timer(0.1, lambda: v.beat() if v.seq < 20 else None)
    p.spin_until(lambda: v.seq >= 20, 10, "20 beats")
    last_beat = time.monotonic()
    assert not [e for e in v.events.msgs if e.event == "skill_ended"], "no end while beats come"
    hold = v.event("link_hold", timeout_s=5)
    held_s = time.monotonic() - last_beat
    assert "no heartbeat for 0.5 s" in hold.cause, hold
    assert 0.4 <= held_s <= 0.9, f"held {held_s:.3f} s after the last beat (timeout 0.5 s)"
    e = v.event("skill_ended", timeout_s=5)
    after_s = time.monotonic() - last_beat
    assert e.code == "stopped" and "heartbeat lost for 1.0 s" in e.cause, e
    assert 0.9 <= after_s <= 1.4, f"on_cancel {after_s:.3f} s after the last beat (grace 1.0 s)"
    r = v.result(h, 10)
    assert (r.status, r.result.code) == (GoalStatus.STATUS_ABORTED, "stopped"), r
    return p, v


def test_beats_from_rclpy_then_silence_stop_the_skill(nodes, peer):
    p, v = beats_then_silence(nodes, peer, 47, "stop")
    p.spin_until(lambda: abs(v.obs.last.speed_mps) < 0.05 and v.obs.last.skill == "", 20, "stopped")


def test_beats_from_rclpy_then_silence_return_home(nodes, peer):
    p, v = beats_then_silence(nodes, peer, 48, "return_home")
    e = v.event("skill_started", pred=lambda e: e.skill == "return_home")
    assert e.target == "H", e
    p.spin_until(lambda: v.obs.last.skill == "return_home", 5, "the observation shows return_home")


def test_params_file_and_namespace(nodes, peer, tmp_path):
    params = tmp_path / "vehicle.yaml"
    params.write_text(
        f"/**:\n  ros__parameters:\n    scenario: {ONE_FIELD}\n    use_sim_time: true\n"
        "acres_vehicle:\n  ros__parameters:\n    skills: false\n"
    )
    core = nodes("core", 49, "-p", f"scenario:={ONE_FIELD}", "-p", "rate:=2.0", "-r", "__ns:=/robot1")
    veh = nodes("vehicle", 49, "--params-file", str(params), "-r", "__ns:=/robot1")
    p = peer(49)
    obs = Latest(p.node, Observation, "/robot1/acres/observation", RELIABLE)
    cmd = Latest(p.node, Twist, "/robot1/cmd_vel", RELIABLE)
    p.spin_until(lambda: obs.msgs, 30, "/robot1/acres/observation")
    assert core.running() and veh.running(), veh.output()
    p.spin_until(
        lambda: ("acres_vehicle", "/robot1") in p.node.get_node_names_and_namespaces(), 10, "/robot1/acres_vehicle"
    )
    o = obs.last
    assert o.state == "idle" and 0.0 <= stamp_s(o.header.stamp) < 1e6, "sim time from the file"
    # skills: false (the node's own section of the file): it serves no action and drives nothing.
    p.spin_for(1.0)
    actions = get_action_names_and_types(p.node)
    assert actions == [], f"no action with skills: false: {actions}"
    assert cmd.msgs == [], "an observe-only node publishes no /cmd_vel"
    topics = dict(p.node.get_topic_names_and_types())
    assert "/acres/observation" not in topics, "nothing on the un-namespaced topic"
