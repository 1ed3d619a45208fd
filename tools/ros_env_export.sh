# shellcheck shell=sh
# The environment of a made ROS 2 environment (tools/ros_env_build.sh's ENV_DIR), as a sourced ROS
# setup.sh would export it: `acres_ros_env_export ENV_DIR`. Sourced by tools/ros_env.sh (which says
# what each variable is) and by the CI image's /opt/ros/jazzy/setup.sh (tools/docker_ci.sh).
# POSIX sh: the image's setup.sh is sourced by sh and bash alike.

acres_ros_env_export() {
    # Prefixed names (no `local` in POSIX sh), unset at the end.
    acres_e_venv="$1/venv"
    acres_e_ifs="$1/interfaces/install"
    acres_e_sp="$acres_e_venv/lib/python3.11/site-packages"
    export ACRES_ROS_PREFIX="$acres_e_venv" ACRES_ROS_INTERFACES="$acres_e_ifs"
    export ACRES_ROS_LIBPYTHON=/usr/lib/x86_64-linux-gnu/libpython3.11.so.1
    export AMENT_PREFIX_PATH="$acres_e_ifs:$acres_e_venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
    export CMAKE_PREFIX_PATH="$acres_e_ifs:$acres_e_venv${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export LD_LIBRARY_PATH="$acres_e_ifs/lib:$acres_e_venv/lib:$acres_e_sp/ros_rcl.libs:$acres_e_sp/ros_rcl_logging_spdlog.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PYTHONPATH="$acres_e_ifs/lib/python3.11/site-packages:$acres_e_sp${PYTHONPATH:+:$PYTHONPATH}"
    export PATH="$acres_e_venv/bin:$PATH"
    export ROS_DISTRO=jazzy ROS_VERSION=2 ROS_PYTHON_VERSION=3 RMW_IMPLEMENTATION=rmw_fastrtps_cpp
    unset acres_e_venv acres_e_ifs acres_e_sp
}
