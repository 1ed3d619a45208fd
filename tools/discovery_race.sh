#!/usr/bin/env bash
# The discovery race at start-up, reproduced (issue 29 item 4; docs/ros.md, "A discovery race at
# start-up"): N stack starts of the vehicle node (RustDDS) with an rclpy peer (rmw_fastrtps_cpp)
# started at the same instant, under CPU load, counting the starts where the peer's graph misses an
# endpoint of the node within the deadline (tools/discovery_race.py does one loop of starts).
#
#   tools/discovery_race.sh [STARTS] [LOOPS] [LOAD]
#     STARTS  starts per loop (default 100)        LOOPS  loops at once (default 2)
#     LOAD    busy loops beside them (default 2; each ends with the run)
# Environment: ACRES_RACE_EXE (the vehicle node; default target/nodes-rustdds/acres_vehicle_node),
#   ACRES_RACE_CAPTURE=FILE.pcap (tcpdump on lo, RTPS only, for tshark), ACRES_RACE_OFFSET_MS (the
#   peer starts a random 0..this ms after the node; default 300), ACRES_RACE_DEADLINE_S (10),
#   ACRES_RACE_LOGS (the logs of missed starts; default target/discovery_race), ACRES_RACE_STACK_NICE
#   (the node and the peer run at this niceness, the busy loops at the script's own: 10 starves the
#   stack the way a build at normal priority does; default 0).
# NETWORK SAFETY: everything that starts a DDS participant runs here inside `unshare -n` with
# loopback alone and ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST. Exit 0: no start missed; 1: some
# did; 2: bad arguments; 3: the environment failed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
starts="${1:-100}"
loops="${2:-2}"
load="${3:-2}"
for v in "$starts" "$loops" "$load"; do
    case "$v" in ''|*[!0-9]*) echo "discovery_race.sh: '$v' is not a count (usage: STARTS LOOPS LOAD)" >&2; exit 2 ;; esac
done
if [ "$loops" -lt 1 ] || [ "$loops" -gt 8 ]; then
    echo "discovery_race.sh: LOOPS $loops: 1 to 8 (each loop has ROS domains of its own, 232 in all)" >&2; exit 2
fi
exe="${ACRES_RACE_EXE:-$ROOT/target/nodes-rustdds/acres_vehicle_node}"
[ -x "$exe" ] || { echo "discovery_race.sh: $exe is not built (tools/ros_test.sh makes it)" >&2; exit 3; }
logs="${ACRES_RACE_LOGS:-$ROOT/target/discovery_race}"
mkdir -p "$logs"
# shellcheck source=tools/ros_env.sh
. tools/ros_env.sh >/dev/null || exit 3
export ACRES_RACE_EXE="$exe" ACRES_RACE_STARTS="$starts" ACRES_RACE_LOOPS="$loops" ACRES_RACE_LOAD="$load" \
    ACRES_RACE_LOGS="$logs" ACRES_RACE_ROOT="$ROOT"
# The inner shell expands the variables exported above, not this one.
# shellcheck disable=SC2016
exec unshare -n sh -c '
set -e
ip link set lo up
ip link set lo multicast on
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
cap=""
if [ -n "${ACRES_RACE_CAPTURE:-}" ]; then
    tcpdump -i lo -s 0 -U -w "$ACRES_RACE_CAPTURE" "(udp and udp[8:4] = 0x52545053) or icmp" 2>"$ACRES_RACE_LOGS/tcpdump.err" &
    cap=$!
    sleep 1
fi
busy=""
i=0
while [ "$i" -lt "$ACRES_RACE_LOAD" ]; do
    sh -c "while :; do :; done" &
    busy="$busy $!"
    i=$((i + 1))
done
pids=""
i=0
while [ "$i" -lt "$ACRES_RACE_LOOPS" ]; do
    nice -n "${ACRES_RACE_STACK_NICE:-0}" python3 "$ACRES_RACE_ROOT/tools/discovery_race.py" --starts "$ACRES_RACE_STARTS" --first-domain $((1 + i * 232 / ACRES_RACE_LOOPS)) --domains $((232 / ACRES_RACE_LOOPS - 1)) \
        --offset-ms "${ACRES_RACE_OFFSET_MS:-300}" --deadline-s "${ACRES_RACE_DEADLINE_S:-10}" --seed $((29 + i)) \
        --exe "$ACRES_RACE_EXE" --log-dir "$ACRES_RACE_LOGS/loop$i" > "$ACRES_RACE_LOGS/loop$i.out" 2>&1 &
    pids="$pids $!"
    i=$((i + 1))
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
for p in $busy; do kill "$p"; done
if [ -n "$cap" ]; then kill -INT "$cap"; wait "$cap" || true; fi
grep -h "^MISSED\|^discovery_race" "$ACRES_RACE_LOGS"/loop*.out || true
# The namespace'"'"'s UDP counters: RcvbufErrors counts datagrams a full socket buffer dropped.
grep "^Udp:" /proc/net/snmp
exit $rc
'
