#!/bin/sh
# launch/vehicle_side.sh — the vehicle side of a link run (the core node, the vehicle node, the
# bridge: what sim_link.launch.py starts) where `ros2 launch` is missing, as in the CI image of
# tools/docker_ci.sh (launch, launch_ros and ros2cli are not on PyPI). Arguments are the launch
# file's, `name:=value` (scenario, maps_dir, rate, seed, host, port, tls, tls_identity,
# fingerprint_file, allow_insecure, attach_timeout_s); the nodes' own defaults for the rest.
#
#   launch/vehicle_side.sh scenario:=scenarios/link/link_sim_f56.json rate:=5.0 fingerprint_file:=FP
#
# As the launch file: when any node exits, the others are stopped and the exit code is that
# node's (0 when SIGINT or SIGTERM stopped them all). ACRES_PREFIX: the colcon install folder
# (default /opt/acres, the image's). DDS stays on loopback: ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# is set here; run it in a private network namespace (the CI's containers are in one).
set -eu
prefix=${ACRES_PREFIX:-/opt/acres}
core=""
vehicle=""
bridge=""
for a in "$@"; do
    case "$a" in
        scenario:=* | maps_dir:=*) core="$core -p $a"; vehicle="$vehicle -p $a" ;;
        rate:=* | seed:=*) core="$core -p $a" ;;
        host:=* | port:=* | tls:=* | tls_identity:=* | fingerprint_file:=* | allow_insecure:=* | attach_timeout_s:=*) bridge="$bridge -p $a" ;;
        *) echo "vehicle_side: unknown argument $a (name:=value, a launch argument of sim_link.launch.py)" >&2; exit 2 ;;
    esac
done
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST

pids=""
stop_all() {
    for p in $pids; do kill -INT "$p" 2>/dev/null || true; done
    for p in $pids; do wait "$p" 2>/dev/null || true; done
    pids=""
}
trap 'stop_all; exit 0' INT TERM
# The arguments hold no spaces (name:=value): word splitting of $core etc. is wanted.
# shellcheck disable=SC2086
"$prefix/acres_core/lib/acres_core/acres_core_node" --ros-args $core &
pids="$pids $!"
# shellcheck disable=SC2086
"$prefix/acres_vehicle_node/lib/acres_vehicle_node/acres_vehicle_node" --ros-args -p use_sim_time:=true $vehicle &
pids="$pids $!"
# shellcheck disable=SC2086
"$prefix/acres_bridge/lib/acres_bridge/acres_bridge" --ros-args -p use_sim_time:=true $bridge &
pids="$pids $!"

# The first node to exit ends the run, with its code.
while :; do
    for p in $pids; do
        if ! kill -0 "$p" 2>/dev/null; then
            code=0
            wait "$p" || code=$?
            echo "vehicle_side: node (pid $p) exited with code $code: stopping the others" >&2
            pids=$(echo "$pids" | tr ' ' '\n' | grep -vx "$p" | tr '\n' ' ')
            stop_all
            exit "$code"
        fi
    done
    sleep 0.2
done
