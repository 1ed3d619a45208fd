"""RIHS01 type hashes over DDS: what rosidl wrote in share/acres_interfaces/*/*.json is what an
rcl node (rclpy) announces for the same type; the RustDDS nodes announce none (ros2-client puts
no `typehash=` in its endpoints' USER_DATA), which rmw_fastrtps_cpp reads as the unset hash, and
which ROS 2 Jazzy accepts (types match by name). The nodes built on the r2r backend
(ACRES_NODES_BACKEND=r2r, tools/ros_test.sh) are rcl nodes: they announce the files' hashes."""

import json
import os
import pathlib

from conftest import ONE_FIELD, Latest
from rclpy.qos import QoSProfile

from acres_interfaces.msg import Heartbeat, Observation, SkillEvent

BACKEND = os.environ.get("ACRES_NODES_BACKEND", "rustdds")
SHARE = pathlib.Path(os.environ["ACRES_ROS_INTERFACES"]) / "share" / "acres_interfaces"


def file_hash(type_name):
    pkg, kind, name = type_name.split("/")
    desc = json.loads((SHARE / kind / f"{name}.json").read_text())
    return next(h["hash_string"] for h in desc["type_hashes"] if h["type_name"] == type_name)


def test_rclpy_announces_the_files_hashes_and_the_nodes_theirs(nodes, peer):
    nodes("core", 51, "-p", f"scenario:={ONE_FIELD}", "-p", "rate:=2.0")
    nodes("vehicle", 51, "-p", f"scenario:={ONE_FIELD}", "-p", "use_sim_time:=true")
    p = peer(51)
    n = p.node
    # rclpy endpoints of the three topics (a publisher of heartbeats, readers of the others).
    n.create_publisher(Heartbeat, "/acres/skill/heartbeat", QoSProfile(depth=10))
    obs = Latest(n, Observation, "/acres/observation", QoSProfile(depth=10))
    Latest(n, SkillEvent, "/acres/events", QoSProfile(depth=10))
    p.spin_until(lambda: obs.msgs, 30, "/acres/observation")
    def endpoints(topic):
        return n.get_publishers_info_by_topic(topic) + n.get_subscriptions_info_by_topic(topic)

    for topic in ["/acres/observation", "/acres/events", "/acres/skill/heartbeat"]:
        p.spin_until(
            lambda t=topic: {"acres_vehicle", "acres_rclpy_peer"} <= {i.node_name for i in endpoints(t)},
            10,
            f"both nodes' endpoints of {topic} in the graph",
        )
    seen = {}
    for topic, type_name, ours_publish in [
        ("/acres/observation", "acres_interfaces/msg/Observation", True),
        ("/acres/events", "acres_interfaces/msg/SkillEvent", True),
        ("/acres/skill/heartbeat", "acres_interfaces/msg/Heartbeat", False),
    ]:
        want = file_hash(type_name)
        infos = endpoints(topic)
        rclpy_side = [i for i in infos if i.node_name == "acres_rclpy_peer"]
        vehicle_side = [i for i in infos if i.node_name == "acres_vehicle"]
        assert rclpy_side and vehicle_side, (topic, infos)
        for i in rclpy_side:
            assert str(i.topic_type_hash) == want, f"{topic}: rclpy announces {i.topic_type_hash}, file {want}"
        for i in vehicle_side:
            assert i.topic_type == type_name
            seen[topic] = str(i.topic_type_hash)
            if BACKEND == "r2r":
                assert str(i.topic_type_hash) == want, f"{topic}: the r2r node announces {i.topic_type_hash}, file {want}"
            else:
                assert str(i.topic_type_hash) != want, "the RustDDS node announces a hash now: compare it instead"
                assert i.topic_type_hash.version == 0, f"{topic}: the unset hash, got {i.topic_type_hash}"
    print(f"the vehicle node's announced hashes ({BACKEND}):", seen)
