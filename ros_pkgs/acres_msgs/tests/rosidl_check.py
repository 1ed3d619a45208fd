#!/usr/bin/env python3
"""Parses every .msg and .action file of an interface package with the rosidl parser
(rosidl_adapter, as vendored by PyPI `mcap-ros2-support`; the parser rosidl_generate_interfaces
runs on .msg files) and prints JSON: {"<Type>": [[field type, field name], ...]}, with an
action's parts as <Action>_Goal, <Action>_Result and <Action>_Feedback. A file rosidl refuses
makes this script fail. Usage: rosidl_check.py PACKAGE_DIR PACKAGE_NAME
"""

import json
import pathlib
import sys

from mcap_ros2._vendor.rosidl_adapter.parser import parse_action_string, parse_message_string


def fields(spec):
    return [[str(f.type), f.name] for f in spec.fields]


def main():
    root, pkg = pathlib.Path(sys.argv[1]), sys.argv[2]
    out = {}
    for path in sorted(root.glob("msg/*.msg")):
        out[path.stem] = fields(parse_message_string(pkg, path.stem, path.read_text()))
    for path in sorted(root.glob("action/*.action")):
        action = parse_action_string(pkg, path.stem, path.read_text())
        for part in ("goal", "result", "feedback"):
            out[f"{path.stem}_{part.capitalize()}"] = fields(getattr(action, part))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
