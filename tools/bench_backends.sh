#!/usr/bin/env bash
# Both ROS backends side by side in one run (issue 19, item 6; a benchmark, not a test): the link
# benchmark (bridge/node/benches/link_sweeps.rs: the DDS hop alone, sweep latency publish → the
# harness's scan through the bridge, the bridge's CPU) and the shield benchmark
# (ros_pkgs/acres_vehicle/benches/shield_reaction.rs: reaction p50/p99, the vehicle node's CPU per
# sweep), built on ros2-client/RustDDS and then on r2r/Fast DDS, the same machine, one after the
# other. Prints each run in full (kept in target/bench-backends/) and the figures side by side.
#
# Built with the test profile (opt-level 2, the test command's build: nothing else to compile);
# ACRES_BENCH_TRIALS sets the shield trials (default 300).
# NETWORK SAFETY: every DDS participant runs with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST inside
# `unshare -n` with loopback alone.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck source=tools/ros_env.sh
. tools/ros_env.sh
out=target/bench-backends
mkdir -p "$out"

bench() { # bench NAME CARGO-ARGS...: both benchmarks on one backend, inside unshare -n
    local name=$1
    shift
    echo "== bench_backends: $name"
    # The inner shell expands $ACRES_ROS_LIBPYTHON (exported by ros_env.sh), not this one.
    # shellcheck disable=SC2016
    unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ACRES_REQUIRE_NETNS=1 RUST_LOG=error LD_PRELOAD="$ACRES_ROS_LIBPYTHON"; exec "$@"' \
        sh cargo bench --quiet --workspace --profile test "$@" --bench link_sweeps --bench shield_reaction \
        | tee "$out/$name.txt"
}

bench rustdds
bench r2r --features acres_ros/r2r
# test.sh's node executables back in target/debug (the r2r build replaced them).
cargo build --quiet --workspace --profile test --bins

figure() { # figure FILE PATTERN: the first line of FILE matching PATTERN, trimmed
    grep -m1 -E "$2" "$1" | sed -E 's/^ +//' || echo "(missing)"
}
echo
echo "== both backends, one run ($(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg))"
for what in "DDS alone" "sweep latency publish → harness scan" "bridge CPU share" "sweeps dropped" \
    "^  p50 .* ms   p99" "ms CPU per sweep"; do
    for name in rustdds r2r; do
        # The plaintext link's figures: the first of each (the TLS run follows it).
        printf '%-8s %s\n' "$name" "$(figure "$out/$name.txt" "$what")"
    done
done
