#!/bin/sh
# launch/link_sim.sh — a link run with no ROS installation: the core node (ACRES Core over
# ROS 2), the vehicle node (the skill server), the bridge node and a harness run over the link.
#
#   launch/link_sim.sh run SCENARIO OUT [HARNESS ARGS...]
#
# NETWORK SAFETY: everything runs inside a private network namespace whose only interface is
# lo (the script re-executes itself under `unshare -n` when it is not in one), and every DDS
# participant is loopback-only (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST). The bridge binds
# 127.0.0.1.
#
# Environment: ACRES_COST_TABLES (the harness's cost tables), ACRES_LINK_RATE (the core node's
# rate, default 5 × real time), ACRES_LINK_PORT (default 5630), ACRES_BIN_DIR (the binaries;
# default target/debug, built with cargo when missing), ACRES_LINK_TOKEN (passed to the bridge
# and the harness; never printed), ACRES_LINK_TLS (1, the default: the link speaks TLS, the bridge
# writes its certificate's fingerprint to OUT/link_sim_logs/bridge.fingerprint and the harness
# pins it with --link-trust; 0: plaintext on loopback), ACRES_PLUGIN_STEP_BUDGET_S (the vehicle
# node's plugin_step_budget_s, default 0.2). Logs of the nodes go to OUT/link_sim_logs/.
# Every child is stopped on exit, error or Ctrl-C; the exit code is the harness's.
set -eu

usage() { echo "usage: $0 run SCENARIO OUT [HARNESS ARGS...]" >&2; exit 2; }
[ "$#" -ge 3 ] || usage
[ "$1" = run ] || usage
shift

here=$(cd "$(dirname "$0")/.." && pwd)

# Only lo in this network namespace? (/proc/self/net/dev lists this namespace's interfaces.)
ifaces=$(tail -n +3 /proc/self/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')
if [ "$ifaces" != "lo " ]; then
    if [ "${ACRES_LINK_SIM_IN_NETNS:-}" = 1 ]; then
        echo "link_sim: still not in a private network namespace (interfaces: $ifaces); refusing to start DDS" >&2
        exit 2
    fi
    export ACRES_LINK_SIM_IN_NETNS=1
    # shellcheck disable=SC2016 # $0 and $@ expand in the inner shell, on purpose
    exec unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; exec "$0" run "$@"' "$0" "$@"
fi

scenario=$1
out=$2
shift 2
[ -f "$scenario" ] || { echo "link_sim: $scenario: no such scenario file" >&2; exit 2; }
bin=${ACRES_BIN_DIR:-$here/target/debug}
if [ ! -x "$bin/acres_core_node" ] || [ ! -x "$bin/acres_vehicle_node" ] || [ ! -x "$bin/acres_bridge" ] || [ ! -x "$bin/acres-harness" ]; then
    [ -z "${ACRES_BIN_DIR:-}" ] || { echo "link_sim: binaries missing in $bin" >&2; exit 2; }
    (cd "$here" && cargo build -q -p acres_core -p acres_vehicle_node -p acres_bridge -p acres-harness)
fi
rate=${ACRES_LINK_RATE:-5}
port=${ACRES_LINK_PORT:-5630}
maps=$(cd "$(dirname "$scenario")" && pwd)/maps
[ -d "$maps" ] || maps=$here/scenarios/maps
mkdir -p "$out/link_sim_logs"
logs=$(cd "$out/link_sim_logs" && pwd)

export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DISTRO="${ROS_DISTRO:-jazzy}"
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-0}"
export RUST_LOG="${RUST_LOG:-info,rustdds=off,ros2_client=warn}"

pids=""
stop_all() {
    for p in $pids; do kill -INT "$p" 2>/dev/null || true; done
    # Up to 2 s to stop cleanly, then SIGKILL.
    i=0
    while [ $i -lt 20 ]; do
        alive=""
        for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
        [ -z "$alive" ] && break
        sleep 0.1
        i=$((i + 1))
    done
    for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
    pids=""
}
trap 'stop_all' EXIT
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM

"$bin/acres_core_node" --ros-args -p "scenario:=$scenario" -p "maps_dir:=$maps" -p "rate:=$rate" >"$logs/core.log" 2>&1 &
pids="$pids $!"
"$bin/acres_vehicle_node" --ros-args -p "scenario:=$scenario" -p "maps_dir:=$maps" -p use_sim_time:=true \
    -p "plugin_step_budget_s:=${ACRES_PLUGIN_STEP_BUDGET_S:-0.2}" >"$logs/vehicle.log" 2>&1 &
pids="$pids $!"
fp=$logs/bridge.fingerprint
rm -f "$fp"
if [ "${ACRES_LINK_TLS:-1}" = 0 ]; then
    "$bin/acres_bridge" --ros-args -p host:=127.0.0.1 -p "port:=$port" -p use_sim_time:=true -p tls:=false >"$logs/bridge.log" 2>&1 &
    pids="$pids $!"
else
    "$bin/acres_bridge" --ros-args -p host:=127.0.0.1 -p "port:=$port" -p use_sim_time:=true -p "fingerprint_file:=$fp" >"$logs/bridge.log" 2>&1 &
    bridge_pid=$!
    pids="$pids $bridge_pid"
    # The bridge writes its fingerprint before it listens (up to 20 s).
    i=0
    while [ ! -s "$fp" ] && [ $i -lt 200 ]; do
        kill -0 "$bridge_pid" 2>/dev/null || { echo "link_sim: the bridge stopped; see $logs/bridge.log" >&2; exit 1; }
        sleep 0.1
        i=$((i + 1))
    done
    [ -s "$fp" ] || { echo "link_sim: the bridge wrote no fingerprint in 20 s; see $logs/bridge.log" >&2; exit 1; }
    set -- --link-trust "$fp" "$@"
fi

code=0
"$bin/acres-harness" run --scenario "$scenario" --out "$out" --world link --link-host 127.0.0.1 --link-port "$port" "$@" || code=$?
stop_all
exit $code
