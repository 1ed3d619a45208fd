"""The whole simulated stack for a link run: the core node (ACRES Core over ROS 2), the vehicle
node and the bridge. The harness then runs on its own:
``acres-harness run --scenario S --world link --link-port 5630 --link-trust FP --out runs/x``
with ``fingerprint_file:=FP`` given here (or ``--link-fingerprint`` with the one the bridge logs).

    ros2 launch launch/sim_link.launch.py scenario:=scenarios/link/link_sim_f56.json

Every parameter is an argument (defaults: the nodes' own; tools/check_launch.py checks them). Any
node that exits shuts the launch down, its name and exit code in the reason. Keep DDS on loopback (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST)
and, on a shared machine, run inside a private network namespace as launch/link_sim.sh does.
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, RegisterEventHandler, Shutdown
from launch.event_handlers import OnProcessExit
from launch.substitutions import LaunchConfiguration as C
from launch_ros.actions import Node

ARGS = {
    "scenario": ("scenarios/link/link_sim_f56.json", "the scenario (map, start, objects, condition)"),
    "maps_dir": ("scenarios/maps", "the maps folder"),
    "rate": ("1.0", "simulated seconds per wall second"),
    "seed": ("0", "the world's seed"),
    "cmd_timeout_s": ("0.5", "a /cmd_vel older than this stops the vehicle, s"),
    "publish_truth": ("true", "publish /acres/sim/truth"),
    "heartbeat_timeout_s": ("1.0", "beats that stop this long hold the goal's skill, s (0: off, a bench only)"),
    "heartbeat_grace_s": ("3.0", "beats that stop this long apply on_cancel, s (longer than heartbeat_timeout_s)"),
    "on_cancel": ("stop", "stop or return_home"),
    "odom_timeout_s": ("1.0", "odometry that stops this long ends the skill, s"),
    "blocked_s": ("0.0", "held this long ends the skill blocked, s (0: the scenario's)"),
    "plugin_step_budget_s": ("0.2", "a process local planner's time to answer a control step, s"),
    "skills": ("true", "serve skills (false: only observe)"),
    "lidar_forward_m": ("1.0", "the LiDAR's distance ahead of the pose, m"),
    "lidar_height_m": ("2.2", "the LiDAR's height above ground, m"),
    "host": ("127.0.0.1", "the bridge's address"),
    "port": ("5630", "the bridge's port"),
    "allow_insecure": ("false", "allow a non-loopback host without a token (ACRES_LINK_TOKEN) or without TLS"),
    "rmw_framing": ("fastrtps", "request/reply framing: fastrtps or cyclonedds"),
    "tls": ("true", "TLS 1.3 on the link (false: plaintext, loopback only unless allow_insecure)"),
    "tls_identity": ("", "the PEM file of the bridge's certificate and key, made there when missing (empty: a new one at each start)"),
    "fingerprint_file": ("", "where the bridge writes its certificate's fingerprint for the harness's --link-trust (empty: only logged)"),
    "attach_timeout_s": ("5.0", "a connection that has not attached this long after it was accepted (TLS handshake included) is closed, s"),
}
# Arguments whose default is a path under the base folder (see base_folder).
PATHS = {"scenario", "maps_dir"}


def base_folder():
    """Where the default paths (PATHS) are: the acres_bridge package's share folder when it is
    installed with them (the docker image puts the scenarios there), else the repository that
    holds this launch file."""
    try:
        from ament_index_python.packages import get_package_share_directory
        share = Path(get_package_share_directory("acres_bridge"))
        if (share / "scenarios").is_dir():
            return share
    except (ImportError, LookupError):  # no ament_index; PackageNotFoundError is a KeyError
        pass
    return Path(__file__).resolve().parent.parent


def declare():
    """The launch arguments; a default of None makes the argument required."""
    base = base_folder()
    out = []
    for k, (v, d) in ARGS.items():
        if v is None:
            out.append(DeclareLaunchArgument(k, description=d))
        else:
            out.append(DeclareLaunchArgument(k, default_value=str(base / v) if k in PATHS else v, description=d))
    return out


def stop_with(node):
    """Any node's exit shuts the whole launch down, the node and its code in the reason."""
    def on_exit(event, _context):
        why = f"{event.action.name} exited with code {event.returncode}: the launch shuts down"
        return [LogInfo(msg=why), Shutdown(reason=why)]
    return RegisterEventHandler(OnProcessExit(target_action=node, on_exit=on_exit))


def generate_launch_description():
    decl = declare()
    sim = {"use_sim_time": True}
    core = Node(
        package="acres_core", executable="acres_core_node", name="acres_core",
        parameters=[{k: C(k) for k in ("scenario", "maps_dir", "rate", "seed", "cmd_timeout_s", "publish_truth", "rmw_framing")}],
    )
    vehicle = Node(
        package="acres_vehicle_node", executable="acres_vehicle_node", name="acres_vehicle",
        parameters=[sim, {k: C(k) for k in ("scenario", "maps_dir", "heartbeat_timeout_s", "heartbeat_grace_s", "on_cancel", "odom_timeout_s",
                                             "blocked_s", "plugin_step_budget_s", "skills", "lidar_forward_m", "lidar_height_m", "rmw_framing")}],
    )
    bridge = Node(
        package="acres_bridge", executable="acres_bridge", name="acres_bridge",
        parameters=[sim, {k: C(k) for k in ("host", "port", "allow_insecure", "rmw_framing", "tls", "tls_identity",
                                          "fingerprint_file", "attach_timeout_s")}],
    )
    nodes = [core, vehicle, bridge]
    return LaunchDescription(decl + nodes + [stop_with(n) for n in nodes])
