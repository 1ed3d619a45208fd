"""A real vehicle: the vehicle node (skill server, shield) and the bridge, no simulator. The
vehicle's drivers publish /odom and /lidar/points and take /cmd_vel. The harness runs on a
laptop: ``acres-harness run --scenario S --world link --link-host VEHICLE --link-fingerprint FP --out runs/field``
(FP: the fingerprint the bridge logs at start; keep it with ``tls_identity:=/path/bridge.pem``).

    ACRES_LINK_TOKEN=... ros2 launch launch/vehicle_bridge.launch.py host:=192.168.50.2 scenario:=site.json

Every parameter is an argument (defaults: the nodes' own; tools/check_launch.py checks them). Any
node that exits shuts the launch down, its name and exit code in the reason. A host other than loopback needs ACRES_LINK_TOKEN in the
environment (or allow_insecure:=true). See docs/field-tests.md.
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, RegisterEventHandler, Shutdown
from launch.event_handlers import OnProcessExit
from launch.substitutions import LaunchConfiguration as C
from launch_ros.actions import Node

ARGS = {
    "scenario": (None, "the site's scenario (map, condition, blocked_s); required"),
    "maps_dir": ("scenarios/maps", "the maps folder"),
    "heartbeat_timeout_s": ("1.0", "beats that stop this long hold the goal's skill, s (0: off, a bench only)"),
    "heartbeat_grace_s": ("3.0", "beats that stop this long apply on_cancel, s (longer than heartbeat_timeout_s)"),
    "on_cancel": ("stop", "stop or return_home"),
    "odom_timeout_s": ("1.0", "odometry that stops this long ends the skill, s"),
    "blocked_s": ("0.0", "held this long ends the skill blocked, s (0: the scenario's)"),
    "plugin_step_budget_s": ("0.2", "a process local planner's time to answer a control step, s"),
    "skills": ("true", "serve skills (false: only observe)"),
    "lidar_forward_m": ("1.0", "the LiDAR's distance ahead of the pose, m"),
    "lidar_height_m": ("2.2", "the LiDAR's height above ground, m"),
    "use_sim_time": ("false", "use /clock"),
    "host": ("127.0.0.1", "the bridge's address (the laptop connects to it)"),
    "port": ("5630", "the bridge's port"),
    "allow_insecure": ("false", "allow a non-loopback host without a token or without TLS"),
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
    vehicle = Node(
        package="acres_vehicle_node", executable="acres_vehicle_node", name="acres_vehicle",
        parameters=[{k: C(k) for k in ("scenario", "maps_dir", "heartbeat_timeout_s", "heartbeat_grace_s", "on_cancel", "odom_timeout_s",
                                        "blocked_s", "plugin_step_budget_s", "skills", "lidar_forward_m", "lidar_height_m", "use_sim_time",
                                        "rmw_framing")}],
    )
    bridge = Node(
        package="acres_bridge", executable="acres_bridge", name="acres_bridge",
        parameters=[{k: C(k) for k in ("host", "port", "allow_insecure", "use_sim_time", "rmw_framing", "tls",
                                        "tls_identity", "fingerprint_file", "attach_timeout_s")}],
    )
    nodes = [vehicle, bridge]
    return LaunchDescription(decl + nodes + [stop_with(n) for n in nodes])
