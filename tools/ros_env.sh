# shellcheck shell=bash
# The project's own ROS 2 Jazzy environment, from PyPI (docs/ros.md). Source it from bash:
#
#     . tools/ros_env.sh            # makes or reuses .ros_env/, then exports the environment
#
# It keeps a cache in $ACRES_ROS_ENV (default .ros_env/ at the repository root, git-ignored):
#   venv/        a Python 3.11 venv (Debian 12's /usr/bin/python3.11: the wheels are cp311 only)
#                with the pinned ros-jazzy-* wheels of tools/ros-requirements.txt; it is also the
#                ROS prefix (include/, lib/, share/ament_index) the wheels install into
#   interfaces/  ros_pkgs/acres_interfaces built by cmake + rosidl: build/ and install/ (the
#                prefix of the generated C, C++ and Python types and share/*/*.json)
# The venv is made again when the hash of tools/ros-requirements.txt (and the layout version in
# ros_env_build.sh) changes; the interfaces are built again when that or any file of
# ros_pkgs/acres_interfaces changes.
#
# Then it exports what a sourced ROS setup.sh would (AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH,
# LD_LIBRARY_PATH, PYTHONPATH, PATH, ROS_DISTRO=jazzy, ROS_VERSION=2, ROS_PYTHON_VERSION=3,
# RMW_IMPLEMENTATION=rmw_fastrtps_cpp) and ACRES_ROS_PREFIX (the venv), ACRES_ROS_INTERFACES
# (the interfaces' install prefix), ACRES_ROS_LIBPYTHON (the shared libpython3.11 that a non-Python
# executable loading *_rosidl_generator_py.so libraries needs preloaded or linked).
#
# Work-arounds for the wheels' packaging (not ours; docs/ros.md says why each is there):
#   - site-packages/ros_rcl.libs and ros_rcl_logging_spdlog.libs (bundled libraries the wheels'
#     RPATH misses) go on LD_LIBRARY_PATH;
#   - lib/librmw_implementation.so, which no wheel ships (rcl links rmw_fastrtps_cpp directly), is
#     made a link to librmw_fastrtps_cpp.so, for whatever links -lrmw_implementation (r2r);
#   - the export_*__rosidl_generator_pyExport.cmake files name /opt/python/cp311-cp311/... include
#     directories (the wheel builder's Python): rewritten to this Python's and numpy's.
# apt: python3.11, libpython3.11-dev, python3.11-venv, cmake, g++ and libclang-dev are installed
# with apt-get when missing (apt-get update once first).
#
# Every step prints its time. Nothing here starts a DDS participant.
# The exit status of the sourcing is 0 when the environment is ready, 1 when a step failed.

# The exports (tools/ros_env_export.sh: shared with the CI image's /opt/ros/jazzy/setup.sh).
# shellcheck source=tools/ros_env_export.sh
. "$(dirname "${BASH_SOURCE[0]}")/ros_env_export.sh"

acres_ros_env_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
acres_ros_env_dir="${ACRES_ROS_ENV:-$acres_ros_env_root/.ros_env}"
acres_ros_env_t0=$(date +%s)
acres_ros_env_rc=0
bash "$acres_ros_env_root/tools/ros_env_build.sh" "$acres_ros_env_dir" || acres_ros_env_rc=$?
if [ "$acres_ros_env_rc" = 0 ]; then
    acres_ros_env_export "$acres_ros_env_dir"
    echo "== ros_env: ready in $(( $(date +%s) - acres_ros_env_t0 )) s (ROS_DISTRO=$ROS_DISTRO, $RMW_IMPLEMENTATION, prefix $ACRES_ROS_PREFIX)"
    unset -f acres_ros_env_export
    unset acres_ros_env_root acres_ros_env_dir acres_ros_env_t0 acres_ros_env_rc
    true
else
    echo "== ros_env: FAILED after $(( $(date +%s) - acres_ros_env_t0 )) s" >&2
    unset -f acres_ros_env_export
    unset acres_ros_env_root acres_ros_env_dir acres_ros_env_t0 acres_ros_env_rc
    false
fi
