#!/usr/bin/env bash
# Makes or refreshes the cache of the project's ROS 2 environment; run by tools/ros_env.sh (which
# says what the cache holds and exports the environment). Usage: ros_env_build.sh ENV_DIR
# A separate process so that `set -e` holds whatever the sourcing shell does.
# ACRES_ROS_ENV_VENV_ONLY=1 makes the venv alone (no interfaces/): the CI image's ROS layer
# (tools/docker_ci.sh), whose colcon build makes acres_interfaces itself.
# The build runs in subshells whose exports are meant to stay there (SC2030/SC2031: informational).
# shellcheck disable=SC2030,SC2031
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
env_dir="$1"
venv="$env_dir/venv" ifs="$env_dir/interfaces"
step_start=0
step() { step_start=$(date +%s); echo "== ros_env: $*"; }
took() { echo "== ros_env: ... $(( $(date +%s) - step_start )) s"; }

# The layout version: raise it when a change here needs the cache made again.
pins_hash="$( (echo layout-1; cat "$root/tools/ros-requirements.txt") | sha256sum | cut -d' ' -f1)"
if_hash="$( (echo "$pins_hash"; cd "$root/ros_pkgs/acres_interfaces" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)"

missing=()
[ -x /usr/bin/python3.11 ] || missing+=(python3.11)
[ -e /usr/lib/x86_64-linux-gnu/libpython3.11.so.1 ] && [ -e /usr/include/python3.11/Python.h ] || missing+=(libpython3.11-dev)
/usr/bin/python3.11 -c 'import ensurepip' 2>/dev/null || missing+=(python3.11-venv)
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
[ "${ACRES_ROS_ENV_VENV_ONLY:-0}" = 1 ] || compgen -G '/usr/lib/llvm-*/lib/libclang.so*' >/dev/null || missing+=(libclang-dev)
if [ ${#missing[@]} -gt 0 ]; then
    step "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    took
fi

# colcon crawls the repository: the wheels' share/*/package.xml are not our packages.
mkdir -p "$env_dir"
touch "$env_dir/COLCON_IGNORE"

if [ "$(cat "$venv/.acres-pins" 2>/dev/null)" != "$pins_hash" ]; then
    step "the Python 3.11 venv with the pinned ROS 2 Jazzy wheels ($venv)"
    rm -rf "$venv" "$ifs"
    mkdir -p "$env_dir"
    /usr/bin/python3.11 -m venv "$venv"
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check pip==26.3
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check \
        -r "$root/tools/ros-requirements.txt"
    took

    step "work-arounds of the wheels' packaging"
    sp="$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    py_inc="$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
    np_inc="$("$venv/bin/python3" -c 'import numpy; print(numpy.get_include())')"
    for d in ros_rcl.libs ros_rcl_logging_spdlog.libs; do
        [ -d "$sp/$d" ] || { echo "ros_env: $sp/$d missing (the wheels changed?)" >&2; exit 1; }
    done
    [ -e "$venv/lib/librmw_fastrtps_cpp.so" ] || { echo "ros_env: librmw_fastrtps_cpp.so missing" >&2; exit 1; }
    ln -sf librmw_fastrtps_cpp.so "$venv/lib/librmw_implementation.so"
    n=0
    for f in "$venv"/share/*/cmake/export_*__rosidl_generator_pyExport.cmake; do
        sed -i -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$np_inc#g" \
               -e "s#/opt/python/cp311-cp311/include/python3.11#$py_inc#g" "$f"
        n=$((n + 1))
    done
    if grep -l '/opt/python/' "$venv"/share/*/cmake/export_*__rosidl_generator_pyExport.cmake >/dev/null 2>&1; then
        echo "ros_env: /opt/python/ paths left in the export files after the rewrite" >&2
        exit 1
    fi
    echo "rewrote $n export_*__rosidl_generator_pyExport.cmake; linked librmw_implementation.so"
    echo "$pins_hash" >"$venv/.acres-pins"
    took
else
    echo "== ros_env: venv up to date ($venv)"
fi

if [ "${ACRES_ROS_ENV_VENV_ONLY:-0}" = 1 ]; then
    echo "== ros_env: the venv alone (ACRES_ROS_ENV_VENV_ONLY=1)"
elif [ "$(cat "$ifs/.acres-src" 2>/dev/null)" != "$if_hash" ]; then
    step "acres_interfaces with cmake + rosidl ($ifs/install)"
    rm -rf "$ifs"
    mkdir -p "$ifs/build"
    sp="$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    log="$ifs/build.log"
    if ! (
        export AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv" PATH="$venv/bin:$PATH" \
            LD_LIBRARY_PATH="$venv/lib:$sp/ros_rcl.libs:$sp/ros_rcl_logging_spdlog.libs" \
            ROS_DISTRO=jazzy ROS_VERSION=2 ROS_PYTHON_VERSION=3
        cd "$ifs/build"
        cmake "$root/ros_pkgs/acres_interfaces" -DCMAKE_INSTALL_PREFIX="$ifs/install" \
            -DPython3_EXECUTABLE="$venv/bin/python3" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF
        make -j2
        make install
    ) >"$log" 2>&1; then
        grep -E 'Error|error:' "$log" | head -20 >&2 || true
        echo "ros_env: acres_interfaces failed to build (log: $log)" >&2
        exit 1
    fi
    echo "$if_hash" >"$ifs/.acres-src"
    took
else
    echo "== ros_env: acres_interfaces up to date ($ifs/install)"
fi
