"""A real vehicle: the vehicle node (skill server, shield) and the bridge, no simulator. The
vehicle's drivers publish /odom and /lidar/points and take /cmd_vel. The harness runs on a
laptop: ``acres-harness run --scenario S --world link --link-host VEHICLE --out runs/field``.

    ACRES_LINK_TOKEN=... ros2 launch launch/vehicle_bridge.launch.py host:=192.168.50.2 scenario:=site.json

Every parameter is an argument. A host other than loopback needs ACRES_LINK_TOKEN in the
environment (or allow_insecure:=true). See docs/field-tests.md.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration as C
from launch_ros.actions import Node

ARGS = {
    "scenario": ("", "the site's scenario (map, condition, blocked_s)"),
    "maps_dir": ("scenarios/maps", "the maps folder"),
    "heartbeat_timeout_s": ("1.0", "beats that stop this long trigger on_cancel, s"),
    "on_cancel": ("stop", "stop or return_home"),
    "odom_timeout_s": ("1.0", "odometry that stops this long ends the skill, s"),
    "blocked_s": ("0.0", "held this long ends the skill blocked, s (0: the scenario's)"),
    "skills": ("true", "serve skills (false: only observe)"),
    "lidar_forward_m": ("1.0", "the LiDAR's distance ahead of the pose, m"),
    "lidar_height_m": ("2.2", "the LiDAR's height above ground, m"),
    "use_sim_time": ("false", "use /clock"),
    "host": ("127.0.0.1", "the bridge's address (the laptop connects to it)"),
    "port": ("5630", "the bridge's port"),
    "allow_insecure": ("false", "allow a non-loopback host without a token"),
    "rmw_framing": ("fastrtps", "request/reply framing: fastrtps or cyclonedds"),
}


def generate_launch_description():
    decl = [DeclareLaunchArgument(k, default_value=v, description=d) for k, (v, d) in ARGS.items()]
    vehicle = Node(
        package="acres_vehicle", executable="acres_vehicle_node", name="acres_vehicle",
        parameters=[{k: C(k) for k in ("scenario", "maps_dir", "heartbeat_timeout_s", "on_cancel", "odom_timeout_s",
                                        "blocked_s", "skills", "lidar_forward_m", "lidar_height_m", "use_sim_time",
                                        "rmw_framing")}],
    )
    bridge = Node(
        package="acres_bridge", executable="acres_bridge", name="acres_bridge",
        parameters=[{k: C(k) for k in ("host", "port", "allow_insecure", "use_sim_time", "rmw_framing")}],
    )
    return LaunchDescription(decl + [vehicle, bridge])
