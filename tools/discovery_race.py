"""The discovery race at start-up, reproduced (issue 29 item 4; docs/ros.md, "A discovery race at
start-up"). Run by tools/discovery_race.sh inside a private network namespace; refuses otherwise.

Each start: the vehicle node (RustDDS) is started and, at the same instant (plus a random offset in
[0, --offset-ms], so the starts sweep the node's start-up window), a new rclpy context and node
(rmw_fastrtps_cpp) in a domain of the start's own. The start counts as missed when, within
--deadline-s, the peer's graph lacks any endpoint of the node: its name, the action server
(`server_is_ready`: its three services and two topics), or a publisher or subscription of it.
One line a start (`start N domain D offset_ms O: ok in T s` or `MISSED ...: what is missing`) and a
summary line at the end; exit 1 when a start missed, 0 when none did.
"""

import argparse
import os
import pathlib
import random
import subprocess
import sys
import time

import rclpy
from rclpy.action import ActionClient
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor

from acres_interfaces.action import Skill

REPO = pathlib.Path(__file__).resolve().parents[1]
ONE_FIELD = str(REPO / "scenarios" / "t1_01_one_field.json")

# (topic, publishers expected, subscriptions expected) of the vehicle node, besides its action.
TOPICS = [
    ("/cmd_vel", 1, 0),
    ("/acres/observation", 1, 0),
    ("/acres/events", 1, 0),
    ("/odom", 0, 1),
    ("/lidar/points", 0, 1),
    ("/acres/skill/heartbeat", 0, 1),
    ("/acres/skill/_action/feedback", 1, 0),
    ("/acres/skill/_action/status", 1, 0),
]


def missing(node, client):
    """What the peer's graph still lacks of the vehicle node (empty: it has everything)."""
    out = []
    names = {n for n, _ns in node.get_node_names_and_namespaces()}
    if "acres_vehicle" not in names:
        out.append("node name acres_vehicle")
    if not client.server_is_ready():
        out.append("action server")
    for topic, pubs, subs in TOPICS:
        if pubs and node.count_publishers(topic) < pubs:
            out.append(f"publisher {topic}")
        if subs and node.count_subscribers(topic) < subs:
            out.append(f"subscription {topic}")
    return out


def one_start(i, domain, exe, offset_ms, deadline_s, log_dir):
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), RUST_LOG=os.environ.get("ACRES_RACE_NODE_LOG", "warn"))
    log = open(log_dir / f"vehicle_{i}.log", "wb")
    t0 = time.monotonic()
    p = subprocess.Popen(
        [exe, "--ros-args", "-p", f"scenario:={ONE_FIELD}"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    time.sleep(offset_ms / 1000)
    ctx = Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node("acres_race_peer", context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    client = ActionClient(node, Skill, "/acres/skill")
    try:
        while True:
            lack = missing(node, client)
            if not lack:
                return None, time.monotonic() - t0
            if p.poll() is not None:
                return [f"the node exited with {p.returncode}"], time.monotonic() - t0
            if time.monotonic() - t0 >= deadline_s:
                return lack, time.monotonic() - t0
            ex.spin_once(timeout_sec=0.02)
    finally:
        p.kill()
        p.wait(timeout=10)
        log.close()
        client.destroy()
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, default=100)
    ap.add_argument("--first-domain", type=int, default=1)
    ap.add_argument("--domains", type=int, default=50, help="domains first..first+this-1 are cycled")
    ap.add_argument("--offset-ms", type=float, default=300.0)
    ap.add_argument("--deadline-s", type=float, default=10.0)
    ap.add_argument("--exe", required=True, help="the vehicle node's executable")
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--seed", type=int, default=29)
    a = ap.parse_args()
    with open("/proc/self/net/dev") as f:
        ifaces = [line.split(":")[0].strip() for line in f.read().splitlines()[2:]]
    if ifaces != ["lo"] or os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") != "LOCALHOST":
        print(f"discovery_race: REFUSED: run inside unshare -n with loopback alone and "
              f"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (interfaces here: {ifaces})", file=sys.stderr)
        sys.exit(3)
    if a.first_domain < 0 or a.domains < 1 or a.first_domain + a.domains > 232:
        print(f"discovery_race: --first-domain {a.first_domain} --domains {a.domains}: ROS domains are 0..232", file=sys.stderr)
        sys.exit(2)
    if not os.access(a.exe, os.X_OK):
        print(f"discovery_race: --exe {a.exe}: not an executable", file=sys.stderr)
        sys.exit(2)
    log_dir = pathlib.Path(a.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    missed, times = 0, []
    for i in range(a.starts):
        domain = a.first_domain + i % a.domains
        offset = rng.uniform(0, a.offset_ms)
        lack, t = one_start(i, domain, a.exe, offset, a.deadline_s, log_dir)
        if lack:
            missed += 1
            print(f"MISSED start {i} domain {domain} offset_ms {offset:.0f}: after {t:.1f} s the peer lacks {lack}", flush=True)
        else:
            times.append(t)
            (log_dir / f"vehicle_{i}.log").unlink()
            print(f"start {i} domain {domain} offset_ms {offset:.0f}: ok in {t:.2f} s", flush=True)
    times.sort()
    p50 = times[len(times) // 2] if times else float("nan")
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] if times else float("nan")
    print(f"discovery_race: {a.starts} starts, {missed} missed (deadline {a.deadline_s} s); "
          f"all endpoints seen in p50 {p50:.2f} s, p99 {p99:.2f} s", flush=True)
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
