"""Support of the rclpy tests: real ROS 2 (rclpy on rmw_fastrtps_cpp, from tools/ros_env.sh)
against the acres nodes built by cargo (ACRES_BIN_DIR: RustDDS by default, or the r2r build).

NETWORK SAFETY (ARCHITECTURE.md): every test here creates DDS participants. The session refuses to
start unless this process is in a private network namespace whose only interface is `lo` and
ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST is set (tools/test.sh runs pytest under `unshare -n`);
the nodes get the same variables.

Helpers: `Proc` (a node process, killed on teardown), `Peer` (an rclpy context and node in one
domain; `spin_until` polls a condition against a deadline while spinning), the nodes' paths and
the scenarios.
"""

import os
import pathlib
import subprocess
import time

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN_DIR = pathlib.Path(os.environ.get("ACRES_BIN_DIR", REPO / "target" / "debug"))
SCENARIOS = REPO / "scenarios"
MAPS = SCENARIOS / "maps"
ONE_FIELD = str(SCENARIOS / "t1_01_one_field.json")


def namespace_interfaces():
    """The interfaces of this process's network namespace (as acres_ros::env reads them)."""
    with open("/proc/self/net/dev") as f:
        return [line.split(":")[0].strip() for line in f.read().splitlines()[2:]]


def pytest_configure(config):
    ifaces = namespace_interfaces()
    if ifaces != ["lo"]:
        raise pytest.UsageError(
            f"REFUSED: the rclpy tests create DDS participants and run only inside a private "
            f"network namespace (interfaces here: {ifaces}); run them as tools/test.sh does: "
            f"unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; exec python3 -m pytest tests/ros'"
        )
    if os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") != "LOCALHOST":
        raise pytest.UsageError("REFUSED: ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST is not set")
    if os.environ.get("RMW_IMPLEMENTATION") != "rmw_fastrtps_cpp":
        raise pytest.UsageError("RMW_IMPLEMENTATION is not rmw_fastrtps_cpp: source tools/ros_env.sh")


class Proc:
    """A node process with its output in a log file; killed (SIGKILL) and reaped on close."""

    def __init__(self, name, argv, env, log_dir):
        self.name = name
        self.log_path = pathlib.Path(log_dir) / f"{name}.log"
        self.log = open(self.log_path, "wb")
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)

    def running(self):
        return self.p.poll() is None

    def wait_running(self, line, timeout_s=30):
        """Waits until the node logs `line`, which it does once all its publishers, subscriptions
        and its action server exist. The tests start their rclpy peer only then: a Fast DDS
        participant started together with a RustDDS node could stay blind to it for 10 s
        (docs/ros.md, "A discovery race at start-up"; patched in vendor/rustdds, measured by
        tools/discovery_race.sh), and these tests are about the nodes' behaviour, not that race."""
        deadline = time.monotonic() + timeout_s
        while line not in self.output():
            if not self.running():
                pytest.fail(f"{self.name} exited with {self.p.returncode} before running:\n{self.output()}")
            if time.monotonic() >= deadline:
                pytest.fail(f"{self.name} did not log {line!r} within {timeout_s} s:\n{self.output()}")
            time.sleep(0.01)

    def output(self):
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(timeout=10)
        self.log.close()


# What each node logs (at info, target `acres_<which>::node`) when all its endpoints exist.
RUNNING = {"core": "world running", "vehicle": "vehicle node running"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the test item, so a fixture's teardown knows the outcome."""
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


@pytest.fixture
def nodes(tmp_path, request):
    """Starts acres nodes: `nodes("core" | "vehicle", domain, *ros_args)`; all killed at teardown.
    When the test failed, each node's state and the end of its log are printed (the report shows
    them under "Captured stdout teardown")."""
    started = []

    def start(which, domain, *ros_args):
        exe = BIN_DIR / f"acres_{which}_node"
        assert exe.exists(), f"{exe} is not built: cargo build -p acres_core -p acres_vehicle"
        env = dict(os.environ)
        log = os.environ.get("ACRES_NODE_LOG", "warn,rustdds=off,ros2_client::service::wrappers=error")
        env.update(
            ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
            ROS_DOMAIN_ID=str(domain),
            # The node's "running" line (info) says every endpoint of it exists: see wait_running.
            RUST_LOG=f"{log},acres_core::node=info,acres_vehicle::node=info",
        )
        p = Proc(f"{which}{len(started)}", [str(exe), "--ros-args", *ros_args], env, tmp_path)
        started.append(p)
        p.wait_running(RUNNING[which])
        return p

    yield start
    rep = getattr(request.node, "rep_call", None)
    failed = rep is not None and rep.failed
    for p in started:
        if failed:
            state = "running" if p.running() else f"exited with {p.p.returncode}"
            tail = "\n".join(p.output().splitlines()[-40:])
            print(f"--- {p.name} ({state}); the end of {p.log_path}:\n{tail}")
        p.close()


class Peer:
    """An rclpy context and node of its own in `domain` (rmw_fastrtps_cpp, loopback only)."""

    def __init__(self, domain, name="acres_rclpy_peer", parameter_overrides=None):
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context, parameter_overrides=parameter_overrides or [])
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, cond, timeout_s, what):
        """Spins until `cond()` is truthy and returns its value; fails after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            v = cond()
            if v:
                return v
            if time.monotonic() >= deadline:
                pytest.fail(f"{what}: not within {timeout_s} s; {self.graph()}")
            self.executor.spin_once(timeout_sec=0.02)

    def graph(self):
        """What this peer's graph holds: the nodes and, per topic, its publishers and subscribers
        (a failed wait says whether discovery or matching is what is missing)."""
        nodes = sorted(f"{ns.rstrip('/')}/{n}" for n, ns in self.node.get_node_names_and_namespaces())
        topics = [
            f"{name} {self.node.count_publishers(name)}/{self.node.count_subscribers(name)}"
            for name, _types in sorted(self.node.get_topic_names_and_types())
        ]
        services = sorted(name for name, _types in self.node.get_service_names_and_types())
        return f"the graph here: nodes {nodes}; topics (publishers/subscribers) {topics}; services {services}"

    def spin_for(self, seconds):
        """Spins for `seconds` (only where time itself is what is tested: beats, a wait)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)

    def future(self, fut, timeout_s, what):
        self.spin_until(fut.done, timeout_s, what)
        return fut.result()

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def peer():
    """`peer(domain, **kw)` makes an rclpy Peer, closed at teardown."""
    made = []

    def make(domain, **kw):
        p = Peer(domain, **kw)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


class Latest:
    """A subscription that keeps every message (and the newest one)."""

    def __init__(self, node, msg_type, topic, qos):
        self.msgs = []
        self.sub = node.create_subscription(msg_type, topic, self.msgs.append, qos)

    @property
    def last(self):
        return self.msgs[-1] if self.msgs else None


def stamp_s(t):
    """A builtin_interfaces/Time in seconds."""
    return t.sec + t.nanosec * 1e-9
