#!/usr/bin/env python3
"""The Rust types of acres_msgs against the types rosidl generated (run by tools/ros_test.sh with
tools/ros_env.sh sourced; no DDS participant is created: serialization needs none).

Input: the JSON of `cargo run -p acres_msgs --example rosidl_types` (every type's ROS name, its
fields in order, its constants, example values with their CDR bytes). For every type that the
environment has (all of acres_interfaces, which must all be there, and the standard ones it has):
  - the field names, in order, equal the generated type's;
  - rclpy deserializes our CDR bytes into the generated type (rosidl's Fast CDR type support),
    the values equal ours field by field, and rclpy serializes them back to exactly our bytes
    (so every field's type, width and alignment agree);
  - the constants equal the generated ones, and the generated type has no constant we lack.
Then the RIHS01 type hashes: every acres_interfaces message has a type description rosidl wrote
(share/acres_interfaces/*/*.json) with a well-formed hash; they are printed. (What the nodes
announce is compared with these hashes by tests/ros/test_type_hashes.py, over DDS.)

Usage: check_rosidl_types.py TYPES.json    (exit 0 all agree, 1 a difference, 2 bad input)
"""

import array
import importlib
import json
import math
import os
import pathlib
import re
import sys

import numpy
from rclpy.serialization import deserialize_message, serialize_message


# Types whose acres_msgs definition is known to differ from this ROS distribution's, with why.
# Each must still differ (a type that comes to agree fails the check, so this list shrinks).
KNOWN_DIFFERENT = {
    "visualization_msgs/msg/Marker": "acres_msgs has the Humble Marker; Jazzy added texture_resource, "
    "texture, uv_coordinates, mesh_file and ARROW_STRIP",
    "visualization_msgs/msg/MarkerArray": "its Marker (above)",
}


def resolve(ros_name):
    """The generated Python class of `pkg/kind/Name` (Name_Part for action and service parts)."""
    pkg, kind, name = ros_name.split("/")
    mod = importlib.import_module(f"{pkg}.{kind}")
    if hasattr(mod, name):
        return getattr(mod, name)
    base, _, part = name.partition("_")
    outer = getattr(mod, base)
    if kind == "srv":
        return getattr(outer, part)
    # action: Skill_Goal, Skill_SendGoal_Request, Skill_FeedbackMessage, ...
    simple = {"Goal": outer.Goal, "Result": outer.Result, "Feedback": outer.Feedback}
    if part in simple:
        return simple[part]
    if part == "FeedbackMessage":
        return outer.Impl.FeedbackMessage
    service, _, side = part.partition("_")
    return getattr(getattr(outer.Impl, f"{service}Service"), side)


def plain(v):
    """A generated message's value as JSON-like Python values."""
    if hasattr(v, "get_fields_and_field_types"):
        return {f: plain(getattr(v, f)) for f in v.get_fields_and_field_types()}
    if isinstance(v, (list, tuple, array.array, numpy.ndarray)):
        return [plain(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return list(v)
    if isinstance(v, numpy.generic):
        return v.item()
    return v


def number(x):
    if x is None:
        return math.nan
    if x == "inf":
        return math.inf
    if x == "-inf":
        return -math.inf
    return x


def diff(ours, theirs, path):
    """Where `ours` (acres_msgs' JSON) and `theirs` (the generated type's values) differ."""
    if isinstance(ours, dict):
        # (The order of the fields is compared with acres_msgs' FIELDS; JSON objects come sorted.)
        if not isinstance(theirs, dict) or sorted(ours) != sorted(theirs):
            return [f"{path}: fields {sorted(ours)} vs {sorted(theirs) if isinstance(theirs, dict) else theirs}"]
        return [d for k in ours for d in diff(ours[k], theirs[k], f"{path}.{k}")]
    if isinstance(ours, list):
        if not isinstance(theirs, list) or len(ours) != len(theirs):
            return [f"{path}: {ours} vs {theirs}"]
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in diff(a, b, f"{path}[{i}]")]
    if isinstance(theirs, float) or isinstance(ours, float) or ours is None or ours in ("inf", "-inf"):
        a, b = number(ours), theirs
        if isinstance(b, (int, float)) and (a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6)):
            return []
        return [f"{path}: {ours!r} vs {theirs!r}"]
    if isinstance(ours, int) and isinstance(theirs, bool):
        return [] if bool(ours) == theirs else [f"{path}: {ours!r} vs {theirs!r}"]
    return [] if ours == theirs else [f"{path}: {ours!r} vs {theirs!r}"]


def generated_constants(cls):
    meta = type(cls)
    consts = getattr(meta, f"_{meta.__name__}__constants", None)
    return dict(consts or {})


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    data = json.loads(pathlib.Path(sys.argv[1]).read_text())
    problems, checked, absent, values, known = [], [], [], 0, {}
    for t in data["types"]:
        name = t["ros_name"]
        before = len(problems)
        try:
            cls = resolve(name)
        except (ImportError, AttributeError) as e:
            if name.startswith("acres_interfaces/"):
                problems.append(f"{name}: not generated by rosidl ({e})")
            else:
                absent.append(name)
            continue
        checked.append(name)
        theirs = list(cls.get_fields_and_field_types())
        if theirs != t["fields"]:
            problems.append(f"{name}: fields {t['fields']} vs rosidl's {theirs}")
        for i, ex in enumerate(t["examples"] if theirs == t["fields"] else []):
            ours = bytes.fromhex(ex["cdr"])
            framed = ours if ours[:2] in (b"\x00\x01", b"\x00\x00") and ours[2:4] == b"\x00\x00" else b"\x00\x01\x00\x00" + ours
            try:
                msg = deserialize_message(framed, cls)
            except Exception as e:  # noqa: BLE001 - the type support's error, reported as a difference
                problems.append(f"{name} example {i}: rclpy cannot read our bytes: {e}")
                continue
            problems += [f"{name} example {i}: {d}" for d in diff(ex["value"], plain(msg), "")]
            # Fast CDR leaves alignment padding as it finds it in its buffer, acres_msgs writes zeros:
            # every byte that differs is a zero (padding) of ours; Fast CDR also pads the end to a
            # multiple of 4, acres_msgs does not.
            back = serialize_message(msg)[4:]
            n = len(framed) - 4
            if len(back) % 4 == 0 and 0 < len(back) - n < 4:
                back = back[:n]
            if len(back) != len(framed) - 4 or any(a != b and a != 0 for a, b in zip(framed[4:], back)):
                problems.append(f"{name} example {i}: rclpy writes {back.hex()} for our {framed[4:].hex()}")
            values += 1
        if name in KNOWN_DIFFERENT:
            known[name] = problems[before:]
            del problems[before:]
    for name, ours in data["constants"].items():
        try:
            cls = resolve(name)
        except (ImportError, AttributeError):
            absent.append(f"{name} (constants)")
            continue
        theirs = generated_constants(cls)
        if theirs != ours:
            line = f"{name}: constants {ours} vs rosidl's {theirs}"
            (known.setdefault(name, []) if name in KNOWN_DIFFERENT else problems).append(line)
    for name in checked:
        theirs = generated_constants(resolve(name))
        if theirs and name not in data["constants"]:
            problems.append(f"{name}: rosidl has constants {theirs} that acres_msgs does not list")

    # RIHS01 type hashes of the type descriptions rosidl wrote.
    share = pathlib.Path(os.environ["ACRES_ROS_INTERFACES"]) / "share" / "acres_interfaces"
    hashes = {}
    for f in sorted(share.glob("*/*.json")):
        desc = json.loads(f.read_text())
        for h in desc["type_hashes"]:
            hashes[h["type_name"]] = h["hash_string"]
    if not hashes:
        problems.append(f"no type descriptions in {share}")
    for type_name, h in sorted(hashes.items()):
        if not re.fullmatch(r"RIHS01_[0-9a-f]{64}", h):
            problems.append(f"{type_name}: malformed hash {h}")
    for t in data["types"]:
        if t["ros_name"].startswith("acres_interfaces/msg/") and t["ros_name"] not in hashes:
            problems.append(f"{t['ros_name']}: no type hash in {share}")
    print(f"rosidl check: {len(checked)} types ({values} example values) checked against rosidl's, "
          f"{len(data['constants'])} constant sets, {len(hashes)} RIHS01 hashes")
    for name, why in KNOWN_DIFFERENT.items():
        if name in checked and not known.get(name):
            problems.append(f"{name}: listed as known to differ ({why}) but agrees now: take it off the list")
        elif name in checked:
            print(f"KNOWN DIFFERENT: {name}: {why} ({len(known[name])} differences, e.g. {known[name][0][:160]})")
    if absent:
        print(f"not in this ROS environment (not checked): {', '.join(absent)}")
    for type_name, h in sorted(hashes.items()):
        print(f"  {h}  {type_name}")
    if problems:
        print(f"{len(problems)} differences:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print("rosidl check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
