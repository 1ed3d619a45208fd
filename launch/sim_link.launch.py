"""The whole simulated stack for a link run: the core node (ACRES Core over ROS 2), the vehicle
node and the bridge. The harness then runs on its own:
``acres-harness run --scenario S --world link --link-port 5630 --out runs/x``.

    ros2 launch launch/sim_link.launch.py scenario:=scenarios/link/link_sim_f56.json

Every parameter is an argument. Keep DDS on loopback (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST)
and, on a shared machine, run inside a private network namespace as launch/link_sim.sh does.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration as C
from launch_ros.actions import Node

ARGS = {
    "scenario": ("scenarios/link/link_sim_f56.json", "the scenario (map, start, objects, condition)"),
    "maps_dir": ("scenarios/maps", "the maps folder"),
    "rate": ("1.0", "simulated seconds per wall second"),
    "seed": ("0", "the world's seed"),
    "cmd_timeout_s": ("0.5", "a /cmd_vel older than this stops the vehicle, s"),
    "publish_truth": ("true", "publish /acres/sim/truth"),
    "heartbeat_timeout_s": ("1.0", "beats that stop this long trigger on_cancel, s"),
    "on_cancel": ("stop", "stop or return_home"),
    "odom_timeout_s": ("1.0", "odometry that stops this long ends the skill, s"),
    "blocked_s": ("0.0", "held this long ends the skill blocked, s (0: the scenario's)"),
    "skills": ("true", "serve skills (false: only observe)"),
    "lidar_forward_m": ("1.0", "the LiDAR's distance ahead of the pose, m"),
    "lidar_height_m": ("2.2", "the LiDAR's height above ground, m"),
    "host": ("127.0.0.1", "the bridge's address"),
    "port": ("5630", "the bridge's port"),
    "allow_insecure": ("false", "allow a non-loopback host without a token (ACRES_LINK_TOKEN)"),
    "rmw_framing": ("fastrtps", "request/reply framing: fastrtps or cyclonedds"),
}


def generate_launch_description():
    decl = [DeclareLaunchArgument(k, default_value=v, description=d) for k, (v, d) in ARGS.items()]
    sim = {"use_sim_time": True}
    core = Node(
        package="acres_core", executable="acres_core_node", name="acres_core",
        parameters=[{k: C(k) for k in ("scenario", "maps_dir", "rate", "seed", "cmd_timeout_s", "publish_truth", "rmw_framing")}],
    )
    vehicle = Node(
        package="acres_vehicle", executable="acres_vehicle_node", name="acres_vehicle",
        parameters=[sim, {k: C(k) for k in ("scenario", "maps_dir", "heartbeat_timeout_s", "on_cancel", "odom_timeout_s",
                                             "blocked_s", "skills", "lidar_forward_m", "lidar_height_m", "rmw_framing")}],
    )
    bridge = Node(
        package="acres_bridge", executable="acres_bridge", name="acres_bridge",
        parameters=[sim, {k: C(k) for k in ("host", "port", "allow_insecure", "rmw_framing")}],
    )
    return LaunchDescription(decl + [core, vehicle, bridge])
