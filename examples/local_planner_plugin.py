#!/usr/bin/env python3
"""An example local planner plugin for acres (Python 3, standard library only).

It speaks the line protocol `acres-local-planner-1` (docs/local-planner-protocol.md) on its
standard input and output: one JSON object per line. It steers by pure pursuit towards a point
`lookahead` metres further along the route and picks the speed from the limit where the vehicle
is, the route's end (braking at DECEL_MPS2) and the curvature of the arc it drives.

Use it from a scenario (the command runs in the scenario file's folder):

    "local_planner": "process:python3 ../../examples/local_planner_plugin.py"

It holds no randomness and no clock, so the same steps give the same commands: a run with it is
as deterministic as one with the built-in driver. Logs go to standard error, never to standard
output (which carries only protocol lines).
"""

import json
import math
import sys

PROTOCOL = "acres-local-planner-1"
DECEL_MPS2 = 0.8
LATERAL_MPS2 = 0.7
CREEP_MPS = 0.4
MIN_LOOKAHEAD_M = 4.0
LOOKAHEAD_S = 1.0


class Route:
    """A polyline with the arc length at each vertex."""

    def __init__(self, points):
        self.points = [tuple(p) for p in points]
        self.cum = [0.0]
        for (x0, y0), (x1, y1) in zip(self.points, self.points[1:]):
            self.cum.append(self.cum[-1] + math.hypot(x1 - x0, y1 - y0))

    def point_at(self, s):
        """The point at arc length s (clamped to the route)."""
        if s <= 0.0 or len(self.points) == 1:
            return self.points[0]
        for i in range(1, len(self.points)):
            if self.cum[i] >= s:
                seg = self.cum[i] - self.cum[i - 1]
                t = 0.0 if seg <= 0.0 else (s - self.cum[i - 1]) / seg
                (x0, y0), (x1, y1) = self.points[i - 1], self.points[i]
                return (x0 + t * (x1 - x0), y0 + t * (y1 - y0))
        return self.points[-1]


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def command(step, route, max_curvature):
    pose = step["pose"]
    limit = step["limit_mps"]
    remaining = step["remaining_m"]
    speed = min(limit, max(CREEP_MPS, math.sqrt(2.0 * DECEL_MPS2 * max(remaining - 0.5, 0.0))))
    lookahead = max(MIN_LOOKAHEAD_M, LOOKAHEAD_S * max(speed, step["speed_mps"]))
    gx, gy = route.point_at(step["s_m"] + lookahead)
    dx, dy = gx - pose["x"], gy - pose["y"]
    c, s = math.cos(pose["yaw"]), math.sin(pose["yaw"])
    lx, ly = c * dx + s * dy, -s * dx + c * dy
    d2 = lx * lx + ly * ly
    kappa = 2.0 * ly / d2 if d2 > 1e-6 else 0.0
    if lx < 0.0:
        kappa = math.copysign(max_curvature, ly)
    kappa = max(-max_curvature, min(max_curvature, kappa))
    if abs(kappa) > 1e-6:
        speed = min(speed, max(CREEP_MPS, math.sqrt(LATERAL_MPS2 / abs(kappa))))
    return speed, max(speed, step["speed_mps"]) * kappa


def main():
    route = None
    max_curvature = 0.2
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            if msg["protocol"] != PROTOCOL:
                print(f"protocol {msg['protocol']} is not {PROTOCOL}", file=sys.stderr)
                return 2
            max_curvature = msg["max_curvature"]
            send({"type": "hello", "protocol": PROTOCOL, "name": "python pure pursuit example"})
        elif kind == "step":
            if "route" in msg:
                route = Route(msg["route"]["points"])
            if route is None:
                send({"type": "error", "seq": msg["seq"], "message": "a step before any route"})
                continue
            v, w = command(msg, route, max_curvature)
            send({"type": "command", "seq": msg["seq"], "speed_mps": v, "yaw_rate_rps": w})
        elif kind == "end":
            route = None
        elif kind == "exit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
