#!/usr/bin/env python3
"""The acres_msgs messages defined again with Eclipse Cyclone DDS's Python IDL types, and their
CDR as Cyclone serializes them: the independent side of the golden-bytes test (golden_cyclone.rs).

Reads a JSON array on stdin, each element {"type": "<DDS type name>", "value": {...}} with the
value as acres_msgs writes it with serde (field names as in the .msg files), and writes a JSON
array on stdout: the hex of each value's serialization (encapsulation header included).
`--list` prints the DDS names of every type defined here, one per line.

No DomainParticipant is created: serialization needs none, and nothing here touches a network.
"""

import collections.abc
import json
import sys
import typing
from dataclasses import dataclass, fields, is_dataclass

from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import (array, float32, float64, int8, int32, int64, sequence, uint8,
                                  uint32, uint64)

TYPES = {}


def ros(pkg, kind, name):
    """Registers a struct under its DDS name pkg::kind::dds_::Name_."""
    typename = f"{pkg}::{kind}::dds_::{name}_"

    def register(cls):
        TYPES[typename] = cls
        return cls

    return typename, register


def msg(pkg, kind, name):
    typename, register = ros(pkg, kind, name)

    def wrap(body):
        cls = type(name, (IdlStruct,), {"__annotations__": body.__annotations__, "__module__": __name__},
                   typename=typename)
        return register(dataclass(cls))

    return wrap


# builtin_interfaces, std_msgs, rosgraph_msgs, unique_identifier_msgs
@msg("builtin_interfaces", "msg", "Time")
class Time:
    sec: int32
    nanosec: uint32


@msg("builtin_interfaces", "msg", "Duration")
class Duration:
    sec: int32
    nanosec: uint32


@msg("std_msgs", "msg", "Header")
class Header:
    stamp: Time
    frame_id: str


@msg("std_msgs", "msg", "ColorRGBA")
class ColorRGBA:
    r: float32
    g: float32
    b: float32
    a: float32


@msg("rosgraph_msgs", "msg", "Clock")
class Clock:
    clock: Time


@msg("unique_identifier_msgs", "msg", "UUID")
class UUID:
    uuid: array[uint8, 16]


# geometry_msgs, nav_msgs, tf2_msgs
@msg("geometry_msgs", "msg", "Vector3")
class Vector3:
    x: float64
    y: float64
    z: float64


@msg("geometry_msgs", "msg", "Point")
class Point:
    x: float64
    y: float64
    z: float64


@msg("geometry_msgs", "msg", "Quaternion")
class Quaternion:
    x: float64
    y: float64
    z: float64
    w: float64


@msg("geometry_msgs", "msg", "Pose")
class Pose:
    position: Point
    orientation: Quaternion


@msg("geometry_msgs", "msg", "Twist")
class Twist:
    linear: Vector3
    angular: Vector3


@msg("geometry_msgs", "msg", "PoseWithCovariance")
class PoseWithCovariance:
    pose: Pose
    covariance: array[float64, 36]


@msg("geometry_msgs", "msg", "TwistWithCovariance")
class TwistWithCovariance:
    twist: Twist
    covariance: array[float64, 36]


@msg("geometry_msgs", "msg", "Transform")
class Transform:
    translation: Vector3
    rotation: Quaternion


@msg("geometry_msgs", "msg", "TransformStamped")
class TransformStamped:
    header: Header
    child_frame_id: str
    transform: Transform


@msg("nav_msgs", "msg", "Odometry")
class Odometry:
    header: Header
    child_frame_id: str
    pose: PoseWithCovariance
    twist: TwistWithCovariance


@msg("tf2_msgs", "msg", "TFMessage")
class TFMessage:
    transforms: sequence[TransformStamped]


# sensor_msgs, visualization_msgs
@msg("sensor_msgs", "msg", "PointField")
class PointField:
    name: str
    offset: uint32
    datatype: uint8
    count: uint32


@msg("sensor_msgs", "msg", "PointCloud2")
class PointCloud2:
    header: Header
    height: uint32
    width: uint32
    fields: sequence[PointField]
    is_bigendian: bool
    point_step: uint32
    row_step: uint32
    data: sequence[uint8]
    is_dense: bool


@msg("sensor_msgs", "msg", "LaserScan")
class LaserScan:
    header: Header
    angle_min: float32
    angle_max: float32
    angle_increment: float32
    time_increment: float32
    scan_time: float32
    range_min: float32
    range_max: float32
    ranges: sequence[float32]
    intensities: sequence[float32]


@msg("visualization_msgs", "msg", "Marker")
class Marker:
    header: Header
    ns: str
    id: int32
    type: int32
    action: int32
    pose: Pose
    scale: Vector3
    color: ColorRGBA
    lifetime: Duration
    frame_locked: bool
    points: sequence[Point]
    colors: sequence[ColorRGBA]
    text: str
    mesh_resource: str
    mesh_use_embedded_materials: bool


@msg("visualization_msgs", "msg", "MarkerArray")
class MarkerArray:
    markers: sequence[Marker]


# action_msgs
@msg("action_msgs", "msg", "GoalInfo")
class GoalInfo:
    goal_id: UUID
    stamp: Time


@msg("action_msgs", "msg", "GoalStatus")
class GoalStatus:
    goal_info: GoalInfo
    status: int8


@msg("action_msgs", "msg", "GoalStatusArray")
class GoalStatusArray:
    status_list: sequence[GoalStatus]


@msg("action_msgs", "srv", "CancelGoal_Request")
class CancelGoal_Request:
    goal_info: GoalInfo


@msg("action_msgs", "srv", "CancelGoal_Response")
class CancelGoal_Response:
    return_code: int8
    goals_canceling: sequence[GoalInfo]


# acres_interfaces
A = "acres_interfaces"


@msg(A, "msg", "FieldCoverage")
class FieldCoverage:
    field: str
    coverage: float64


@msg(A, "msg", "Observation")
class Observation:
    header: Header
    x_m: float64
    y_m: float64
    yaw_rad: float64
    speed_mps: float64
    odom_m: float64
    skill: str
    skill_id: uint64
    state: str
    progress: float64
    target: str
    remaining_m: float64
    ahead_m: float64
    shield_holding: bool
    hold_since_s: float64
    interrupted_skill: str
    interrupted_id: uint64
    interrupted_target: str
    coverage: sequence[FieldCoverage]
    scouted: sequence[str]
    energy_estimate_mj: float64
    route_ahead: sequence[Point]


@msg(A, "msg", "SkillEvent")
class SkillEvent:
    header: Header
    event: str
    skill_id: uint64
    skill: str
    code: str
    cause: str
    target: str
    route_m: float64
    remaining_m: float64
    progress: float64
    seconds: float64
    resumes_id: uint64
    ahead_m: float64
    stopping_m: float64
    hold_at: Point
    held_s: float64
    why: str
    field: str


@msg(A, "msg", "Heartbeat")
class Heartbeat:
    stamp: Time
    seq: uint64
    sender: str


@msg(A, "msg", "SimObject")
class SimObject:
    id: uint32
    kind: str
    x_m: float64
    y_m: float64
    yaw_rad: float64
    first_seen_s: float64


@msg(A, "msg", "SimTruth")
class SimTruth:
    header: Header
    objects: sequence[SimObject]
    contact: bool
    contact_steps: uint64
    contact_object: int64
    energy_mj: float64


@msg(A, "msg", "PlannerWake")
class PlannerWake:
    stamp: Time
    n: uint64
    reason: str
    message: str
    frame: str


@msg(A, "msg", "ModelCall")
class ModelCall:
    request_stamp: Time
    latency_s: float64
    call: uint64
    wake: uint64
    blocks_sent: uint32
    stop: str
    text: str
    reasoning: str
    tool_call_ids: sequence[str]
    input_tokens: uint64
    output_tokens: uint64
    cache_read_tokens: uint64
    cache_write_tokens: uint64
    error: str


@msg(A, "msg", "ToolCall")
class ToolCall:
    stamp: Time
    wake: uint64
    call_id: str
    name: str
    arguments_json: str
    result_json: str
    error: bool


@msg(A, "msg", "PlanVerdict")
class PlanVerdict:
    stamp: Time
    visits: sequence[str]
    return_home: bool
    accepted: bool
    source: str
    reason: str
    counterexample: str
    planned_time_s: float64
    planned_energy_mj: float64


@msg(A, "action", "Skill_Goal")
class Skill_Goal:
    skill: str
    place: str
    field: str
    seconds: float64
    speed_cap_mps: float64


@msg(A, "action", "Skill_Result")
class Skill_Result:
    code: str
    cause: str
    skill_id: uint64


@msg(A, "action", "Skill_Feedback")
class Skill_Feedback:
    progress: float64
    state: str
    remaining_m: float64


@msg(A, "action", "Skill_SendGoal_Request")
class Skill_SendGoal_Request:
    goal_id: UUID
    goal: Skill_Goal


@msg(A, "action", "Skill_SendGoal_Response")
class Skill_SendGoal_Response:
    accepted: bool
    stamp: Time


@msg(A, "action", "Skill_GetResult_Request")
class Skill_GetResult_Request:
    goal_id: UUID


@msg(A, "action", "Skill_GetResult_Response")
class Skill_GetResult_Response:
    status: int8
    result: Skill_Result


@msg(A, "action", "Skill_FeedbackMessage")
class Skill_FeedbackMessage:
    goal_id: UUID
    feedback: Skill_Feedback


def build(hint, value):
    """Builds the value of type `hint` (a Cyclone IDL annotation) from its JSON form."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if isinstance(hint, type) and is_dataclass(hint):
        hints = typing.get_type_hints(hint, include_extras=True)
        names = [f.name for f in fields(hint)]
        if sorted(value) != sorted(names):
            raise ValueError(f"{hint.__name__}: fields {sorted(value)} are not {sorted(names)}")
        return hint(**{n: build(hints[n], value[n]) for n in names})
    if typing.get_origin(hint) is collections.abc.Sequence:
        (item,) = typing.get_args(hint)
        return [build(item, v) for v in value]
    return value


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(TYPES))
        return
    out = []
    for item in json.load(sys.stdin):
        cls = TYPES[item["type"]]
        out.append(build(cls, item["value"]).serialize().hex())
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
