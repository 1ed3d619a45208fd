#!/usr/bin/env python3
"""Decodes acres_msgs CDR with the schema text acres_msgs writes, using the Python MCAP ROS 2
reader (PyPI `mcap-ros2-support`, the decoder Foxglove's and the MCAP project's Python tools use):
the reader's side of schema_mcap_ros2.rs.

Reads a JSON array on stdin, each element {"schema_name": "pkg/Type", "schema_text": "...",
"cdr": "<hex>"}, and writes a JSON array on stdout: each message decoded into plain JSON
(nested messages as objects, byte arrays as lists of integers).
"""

import json
import sys

from mcap_ros2._dynamic import generate_dynamic


def plain(value):
    """The decoded value as plain JSON data."""
    if hasattr(value, "__slots__") and not isinstance(value, (bytes, str)):
        return {name: plain(getattr(value, name)) for name in value.__slots__}
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def main():
    decoders = {}
    out = []
    for item in json.load(sys.stdin):
        name, text = item["schema_name"], item["schema_text"]
        if (name, text) not in decoders:
            decoders[(name, text)] = generate_dynamic(name, text)[name]
        out.append(plain(decoders[(name, text)](bytes.fromhex(item["cdr"]))))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
