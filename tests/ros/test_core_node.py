"""ACRES Core's node (RustDDS) read and driven by rclpy on rmw_fastrtps_cpp: every topic it
publishes (values, units, frames, QoS), /cmd_vel and the cmd_timeout_s stop, --params-file,
-r __ns:= and use_sim_time against its /clock."""

import json
import os
import math
import struct
import time

from conftest import MAPS, ONE_FIELD, Latest, stamp_s
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from rclpy.qos import (
    DurabilityPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
)
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import PointCloud2, PointField

from acres_interfaces.msg import SimTruth

RELIABLE = QoSProfile(depth=10)
BEST_EFFORT = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)


def home_pose():
    m = json.loads((MAPS / "default.json").read_text())
    h = next(n for n in m["nodes"] if n["id"] == "H")
    return h["x"], h["y"], m["home_yaw_rad"]


def publisher_qos(node, topic):
    infos = node.get_publishers_info_by_topic(topic)
    assert len(infos) == 1, f"one publisher of {topic}: {infos}"
    return infos[0]


def test_every_topic_of_the_core_node_reads_right(nodes, peer):
    core = nodes("core", 31, "-p", f"scenario:={ONE_FIELD}", "-p", "rate:=4.0")
    p = peer(31)
    n = p.node
    clock = Latest(n, Clock, "/clock", BEST_EFFORT)
    odom = Latest(n, Odometry, "/odom", RELIABLE)
    cloud = Latest(n, PointCloud2, "/lidar/points", qos_profile_sensor_data)
    truth = Latest(n, SimTruth, "/acres/sim/truth", RELIABLE)
    p.spin_until(lambda: clock.msgs and odom.msgs and cloud.msgs and truth.msgs, 30, "every topic arrives")
    assert core.running(), core.output()

    # The graph: node name, types and QoS as an rclcpp node would show them.
    p.spin_until(lambda: ("acres_core", "/") in n.get_node_names_and_namespaces(), 10, "acres_core in the graph")
    types = dict(n.get_topic_names_and_types())
    # ros2-client's spinner also reads /clock as builtin_interfaces/msg/Time (its own reader, under
    # no node name: upstream's, not ours; it matches no ROS publisher). The publisher is right:
    assert "rosgraph_msgs/msg/Clock" in types["/clock"], types["/clock"]
    assert [i.topic_type for i in n.get_publishers_info_by_topic("/clock")] == ["rosgraph_msgs/msg/Clock"]
    assert types["/odom"] == ["nav_msgs/msg/Odometry"]
    # /tf: the r2r nodes need tf2_msgs' type support, which the PyPI Jazzy lacks (no wheel): they
    # run without /tf here (docs/ros.md); the RustDDS ones publish it.
    tf_here = os.environ.get("ACRES_NODES_BACKEND", "rustdds") != "r2r"
    if tf_here:
        assert types["/tf"] == ["tf2_msgs/msg/TFMessage"]
    else:
        assert "/tf" not in types, types.get("/tf")
    assert types["/lidar/points"] == ["sensor_msgs/msg/PointCloud2"]
    assert types["/acres/sim/truth"] == ["acres_interfaces/msg/SimTruth"]
    assert types["/cmd_vel"] == ["geometry_msgs/msg/Twist"]
    for topic, rel in [
        ("/clock", ReliabilityPolicy.BEST_EFFORT),
        ("/odom", ReliabilityPolicy.RELIABLE),
        ("/tf", ReliabilityPolicy.RELIABLE),
        ("/lidar/points", ReliabilityPolicy.BEST_EFFORT),
        ("/acres/sim/truth", ReliabilityPolicy.RELIABLE),
    ]:
        if topic == "/tf" and not tf_here:
            continue
        q = publisher_qos(n, topic).qos_profile
        assert q.reliability == rel, f"{topic}: {q.reliability}"
        assert q.durability == DurabilityPolicy.VOLATILE, f"{topic}: {q.durability}"
    subs = n.get_subscriptions_info_by_topic("/cmd_vel")
    assert [s.node_name for s in subs] == ["acres_core"], subs
    assert subs[0].qos_profile.reliability == ReliabilityPolicy.RELIABLE

    # /clock: simulated mission time from 0 (not the wall clock), rising.
    p.spin_until(lambda: len(clock.msgs) >= 20, 10, "20 clock ticks")
    ts = [stamp_s(c.clock) for c in clock.msgs]
    assert 0.0 <= ts[0] < 120.0, ts[0]
    assert all(b > a for a, b in zip(ts, ts[1:])), "the clock rises"
    steps = [round(b - a, 6) for a, b in zip(ts, ts[1:])]
    assert min(steps) >= 0.05 - 1e-6, f"20 Hz steps (best effort may drop some): {steps}"

    # /odom: odom -> base_link, at home, heading home_yaw_rad, standing still; a unit quaternion.
    o = odom.last
    assert (o.header.frame_id, o.child_frame_id) == ("odom", "base_link")
    hx, hy, hyaw = home_pose()
    pos, q = o.pose.pose.position, o.pose.pose.orientation
    assert math.hypot(pos.x - hx, pos.y - hy) < 0.5, (pos, hx, hy)
    assert abs(math.hypot(q.x, q.y, q.z, q.w) - 1.0) < 1e-9
    assert (q.x, q.y) == (0.0, 0.0)
    yaw = 2.0 * math.atan2(q.z, q.w)
    assert abs(math.remainder(yaw - hyaw, math.tau)) < 1e-6, (yaw, hyaw)
    assert abs(o.twist.twist.linear.x) < 1e-9 and o.twist.twist.angular.z == 0.0
    assert abs(stamp_s(o.header.stamp) - ts[-1]) < 5.0, "odometry is stamped with mission time"

    # /lidar/points: frame lidar, x y z intensity float32, little-endian, dense, a multi-ring sweep.
    c = cloud.last
    assert c.header.frame_id == "lidar"
    assert [(f.name, f.offset, f.datatype, f.count) for f in c.fields] == [
        ("x", 0, PointField.FLOAT32, 1),
        ("y", 4, PointField.FLOAT32, 1),
        ("z", 8, PointField.FLOAT32, 1),
        ("intensity", 12, PointField.FLOAT32, 1),
    ]
    assert (c.height, c.point_step, c.is_bigendian) == (1, 16, False)
    assert c.row_step == 16 * c.width and len(c.data) == c.row_step
    assert c.width > 1000, f"a multi-ring sweep: {c.width} points"
    pts = list(struct.iter_unpack("<4f", bytes(c.data)))
    ranges = [math.sqrt(x * x + y * y + z * z) for x, y, z, _ in pts]
    assert all(math.isfinite(r) for r in ranges)
    assert 0.5 < min(ranges) and max(ranges) < 200.0, (min(ranges), max(ranges))
    assert min(z for _, _, z, _ in pts) < -1.0, "ground returns below the sensor (mounted above it)"
    assert stamp_s(c.header.stamp) <= ts[-1] + 1.0

    # /acres/sim/truth: the one-field scenario has no objects and no contact.
    t = truth.last
    assert t.header.frame_id == "map"
    assert list(t.objects) == [] and not t.contact and t.contact_object == -1
    assert t.energy_mj >= 0.0


def test_cmd_vel_from_rclpy_drives_and_a_stale_command_stops(nodes, peer):
    nodes("core", 32, "-p", f"scenario:={ONE_FIELD}", "-p", "rate:=1.0", "-p", "cmd_timeout_s:=0.5")
    p = peer(32)
    odom = Latest(p.node, Odometry, "/odom", RELIABLE)
    pub = p.node.create_publisher(Twist, "/cmd_vel", RELIABLE)
    drive = Twist()
    drive.linear.x = 3.0
    p.node.create_timer(0.1, lambda: pub.publish(drive) if drive.linear.x else None)
    p.spin_until(lambda: odom.last and odom.last.twist.twist.linear.x > 1.0, 20, "fresh /cmd_vel drives")
    # Commands keep coming every 0.1 s (< cmd_timeout_s): the vehicle keeps driving.
    n0 = len(odom.msgs)
    p.spin_for(1.0)
    assert min(m.twist.twist.linear.x for m in odom.msgs[n0:]) > 1.0, "no stop while commands are fresh"
    moved_from = odom.last.pose.pose.position.x, odom.last.pose.pose.position.y
    # No more commands: after cmd_timeout_s of simulated time the core stops the vehicle itself.
    drive.linear.x = 0.0
    last_cmd_t = stamp_s(odom.last.header.stamp)
    stopped = p.spin_until(
        lambda: odom.last.twist.twist.linear.x < 0.01 and odom.last, 15, "a stale /cmd_vel stops the vehicle"
    )
    # Braking began only after the timeout: the speed stays up for about 0.5 s after the last command.
    still_fast = [m for m in odom.msgs if last_cmd_t < stamp_s(m.header.stamp) <= last_cmd_t + 0.3]
    assert still_fast and min(m.twist.twist.linear.x for m in still_fast) > 1.0, "not before cmd_timeout_s"
    pos = stopped.pose.pose.position
    assert math.hypot(pos.x - moved_from[0], pos.y - moved_from[1]) > 0.1, "it moved while braking"


def test_params_file_and_namespace_and_use_sim_time(nodes, peer, tmp_path):
    params = tmp_path / "core.yaml"
    params.write_text(f"acres_core:\n  ros__parameters:\n    scenario: {ONE_FIELD}\n    rate: 4.0\n    publish_truth: false\n")
    core = nodes("core", 33, "--params-file", str(params), "-r", "__ns:=/robot1")
    p = peer(33, name="sim_time_reader", parameter_overrides=[Parameter("use_sim_time", value=True)])
    n = p.node
    odom = Latest(n, Odometry, "/robot1/odom", RELIABLE)
    clock = Latest(n, Clock, "/clock", BEST_EFFORT)
    truth = Latest(n, SimTruth, "/robot1/acres/sim/truth", RELIABLE)
    p.spin_until(lambda: odom.msgs and len(clock.msgs) > 2, 30, "/robot1/odom and /clock")
    assert core.running(), core.output()
    p.spin_until(lambda: ("acres_core", "/robot1") in n.get_node_names_and_namespaces(), 10, "/robot1/acres_core")
    topics = dict(n.get_topic_names_and_types())
    assert "/robot1/lidar/points" in topics and "/robot1/cmd_vel" in topics, topics
    assert "/odom" not in topics and "/robot1/clock" not in topics and "/clock" in topics, topics
    # use_sim_time: the rclpy node's clock is the core's /clock, which runs at rate 4 (the file's).
    sim0 = n.get_clock().now().nanoseconds * 1e-9
    assert 0.0 < sim0 < 1e6, f"simulated time, not the wall clock: {sim0}"
    w0 = time.monotonic()
    p.spin_for(2.0)
    sim1 = n.get_clock().now().nanoseconds * 1e-9
    ratio = (sim1 - sim0) / (time.monotonic() - w0)
    assert 2.5 < ratio < 5.5, f"4 simulated s per wall s (rate from the params file): {ratio:.2f}"
    assert abs(sim1 - stamp_s(clock.last.clock)) < 0.5, "the rclpy clock follows /clock"
    # publish_truth: false from the file: 2 s (8 sweeps) and no truth.
    assert truth.msgs == [], "no /acres/sim/truth with publish_truth: false"
