#!/usr/bin/env bash
# The link over a field's Wi-Fi at real time (issue 29, item 1; a benchmark, not a test): the
# matrix of bridge/node/benches/link_matrix.rs — the bridge's port shaped by tc (htb, lo's MTU
# 1500) to unshaped, 25, 10, 5 and 2 Mbit/s × 0, 20 ± 10 and 50 ± 20 ms each way through the
# link tests' impairing proxy — printed as a table and kept in target/bench-link/.
#
# Bounded: each cell takes its measured seconds (ACRES_MATRIX_CELL_S, default 20) plus about 6 s
# (a fresh bridge, discovery, a 3 s stall): the full matrix about 7 min. A reduced matrix:
#   ACRES_MATRIX_RATES=0,5,2 ACRES_MATRIX_DELAYS='0±0,50±20' ACRES_MATRIX_CELL_S=10 tools/bench_link.sh
# Built with the test profile (the test command's build: nothing else to compile). Needs root
# (unshare -n, tc).
# NETWORK SAFETY: every DDS participant runs with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST inside
# `unshare -n` with loopback alone; tc changes that namespace's lo only.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
out=target/bench-link
mkdir -p "$out"
cargo bench --quiet --workspace --profile test --bench link_matrix --no-run
timeout --kill-after=30 3600 unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ACRES_REQUIRE_NETNS=1 RUST_LOG=error; exec cargo bench --quiet --workspace --profile test --bench link_matrix' \
    | tee "$out/matrix-$(date -u +%Y%m%dT%H%MZ).txt"
