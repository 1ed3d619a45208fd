#!/usr/bin/env python3
"""Eclipse Cyclone DDS (PyPI `cyclonedds`) as an independent ROS 2 peer of the acres nodes.

A Cyclone participant, loopback only (CYCLONEDDS_URI allows the `lo` interface alone; run inside
a private network namespace), reads one sample each of /lidar/points, /odom and
/acres/observation under their ROS 2 topic and type names and decodes them, then sends a goal
to /acres/skill with rmw_cyclonedds's request/reply framing (a 16-byte header: the client's
GUID half and the sequence number) and waits for its result. Prints one JSON object.

Usage: cyclone_interop.py DOMAIN_ID SKILL FIELD TIMEOUT_S
"""

import json
import os
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../acres_msgs/tests"))

LOOPBACK_ONLY = (
    '<CycloneDDS><Domain id="any"><General><Interfaces>'
    '<NetworkInterface name="lo" multicast="true"/></Interfaces>'
    '<AllowMulticast>true</AllowMulticast></General>'
    '<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>20</MaxAutoParticipantIndex>'
    '<Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>'
)
os.environ["CYCLONEDDS_URI"] = LOOPBACK_ONLY

from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlStruct  # noqa: E402
from cyclonedds.idl.types import array, int8, int32, uint8, uint32  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

import cyclone_cdr as m  # noqa: E402

A = "acres_interfaces::action::dds_::"


# The golden-test types serialize only; topics need the DDS type names, given here.
@dataclass
class PointCloud2(m.PointCloud2, typename="sensor_msgs::msg::dds_::PointCloud2_"):
    pass


@dataclass
class Odometry(m.Odometry, typename="nav_msgs::msg::dds_::Odometry_"):
    pass


@dataclass
class Observation(m.Observation, typename="acres_interfaces::msg::dds_::Observation_"):
    pass


@dataclass
class SendGoalRequest(IdlStruct, typename=A + "Skill_SendGoal_Request_"):
    guid: array[uint8, 8]
    seq_high: int32
    seq_low: uint32
    goal_id: m.UUID
    goal: m.Skill_Goal


@dataclass
class SendGoalReply(IdlStruct, typename=A + "Skill_SendGoal_Response_"):
    guid: array[uint8, 8]
    seq_high: int32
    seq_low: uint32
    accepted: bool
    stamp: m.Time


@dataclass
class GetResultRequest(IdlStruct, typename=A + "Skill_GetResult_Request_"):
    guid: array[uint8, 8]
    seq_high: int32
    seq_low: uint32
    goal_id: m.UUID


@dataclass
class GetResultReply(IdlStruct, typename=A + "Skill_GetResult_Response_"):
    guid: array[uint8, 8]
    seq_high: int32
    seq_low: uint32
    status: int8
    result: m.Skill_Result


def first(reader, deadline):
    while time.monotonic() < deadline:
        for s in reader.take(N=10):
            return s
        time.sleep(0.01)
    return None


def main():
    domain, skill, field, timeout_s = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
    deadline = time.monotonic() + timeout_s
    dp = DomainParticipant(domain)
    best_effort = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(5))
    reliable = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))
    out = {}

    cloud_t = Topic(dp, "rt/lidar/points", PointCloud2)
    odom_t = Topic(dp, "rt/odom", Odometry)
    obs_t = Topic(dp, "rt/acres/observation", Observation)
    readers = {
        "cloud": DataReader(dp, cloud_t, qos=best_effort),
        "odom": DataReader(dp, odom_t, qos=best_effort),
        "observation": DataReader(dp, obs_t, qos=best_effort),
    }
    c = first(readers["cloud"], deadline)
    if c is not None:
        names = [f.name for f in c.fields]
        n = c.width * c.height
        xs = [int.from_bytes(bytes(c.data[i * c.point_step:i * c.point_step + 4]), "little") for i in range(min(n, 1))]
        out["cloud"] = {"frame": c.header.frame_id, "points": n, "fields": names, "point_step": c.point_step,
                        "bytes": len(c.data), "first_x_bits": xs}
    o = first(readers["odom"], deadline)
    if o is not None:
        p = o.pose.pose.position
        out["odom"] = {"frame": o.header.frame_id, "child": o.child_frame_id, "x": p.x, "y": p.y}
    ob = first(readers["observation"], deadline)
    if ob is not None:
        out["observation"] = {"state": ob.state, "x_m": ob.x_m, "y_m": ob.y_m}

    base = "acres/skill/_action/"
    goal_w = DataWriter(dp, Topic(dp, "rq/" + base + "send_goalRequest", SendGoalRequest), qos=reliable)
    goal_r = DataReader(dp, Topic(dp, "rr/" + base + "send_goalReply", SendGoalReply), qos=reliable)
    res_w = DataWriter(dp, Topic(dp, "rq/" + base + "get_resultRequest", GetResultRequest), qos=reliable)
    res_r = DataReader(dp, Topic(dp, "rr/" + base + "get_resultReply", GetResultReply), qos=reliable)
    # Wait for the server's request readers and reply writers (discovery) before the first request.
    while time.monotonic() < deadline and not all(
        x.get_publication_matched_status().current_count > 0 for x in (goal_w, res_w)
    ) or not all(x.get_subscription_matched_status().current_count > 0 for x in (goal_r, res_r)):
        if time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    guid = list(os.urandom(8))
    goal_id = m.UUID(uuid=list(os.urandom(16)))
    nan = float("nan")
    goal = m.Skill_Goal(skill=skill, place="", field=field, seconds=nan, speed_cap_mps=nan)
    goal_w.write(SendGoalRequest(guid=guid, seq_high=0, seq_low=1, goal_id=goal_id, goal=goal))
    rep = None
    while rep is None and time.monotonic() < deadline:
        for s in goal_r.take(N=10):
            if list(s.guid) == guid and s.seq_low == 1:
                rep = s
        time.sleep(0.01)
    out["accepted"] = None if rep is None else bool(rep.accepted)
    if rep is not None and rep.accepted:
        res_w.write(GetResultRequest(guid=guid, seq_high=0, seq_low=2, goal_id=goal_id))
        res = None
        while res is None and time.monotonic() < deadline:
            for s in res_r.take(N=10):
                if list(s.guid) == guid and s.seq_low == 2:
                    res = s
            time.sleep(0.02)
        if res is not None:
            out["result"] = {"status": res.status, "code": res.result.code, "cause": res.result.cause,
                             "skill_id": res.result.skill_id}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
