#!/usr/bin/env bash
# The tests with a real ROS 2 (issue 19), a step of tools/test.sh; runs on its own too:
#   1. the project's ROS 2 Jazzy environment from PyPI (tools/ros_env.sh: made once, then cached
#      in .ros_env/), acres_interfaces built by rosidl into it;
#   2. the Rust types of acres_msgs against what rosidl generated (tests/ros/check_rosidl_types.py:
#      field names, types, order, constants, RIHS01 type hashes);
#   3. rclpy clients (rmw_fastrtps_cpp, the generated acres_interfaces types) against the core
#      node and the vehicle node (RustDDS, built here by cargo): pytest tests/ros, inside a private
#      network namespace;
#   4. the r2r backend: the nodes with the feature acres_ros/r2r (clippy, build), the rclpy tests
#      against them, acres_ros's unit tests, the DDS tests and a link subset on r2r, and the DDS
#      tests across the backends (r2r client against RustDDS nodes, RustDDS client against r2r
#      nodes), inside a private network namespace.
#      One target dir (target/) and one profile (test) for all: only what the r2r feature changes
#      is compiled again. The r2r build replaces the executables in target/debug, so each
#      backend's nodes are copied aside (target/nodes-rustdds, target/nodes-r2r), and test.sh's
#      are linked back into place at the end.
# ACRES_ROS_SKIP_R2R=1 leaves out 4 (a developer's quick run; the test command never sets it).
# Each step prints its time. NETWORK SAFETY: every DDS participant (the nodes, rclpy) runs with
# ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST inside `unshare -n` with loopback alone.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
t0=$(date +%s)
step_start=$t0
step() { step_start=$(date +%s); echo "== ros_test: $*"; }
took() { echo "== ros_test: ... $(( $(date +%s) - step_start )) s"; }

step "the ROS 2 environment (tools/ros_env.sh)"
# shellcheck source=tools/ros_env.sh
. tools/ros_env.sh
took

step "the node binaries (cargo build --workspace --profile test --bins: test.sh's own)"
cargo build --quiet --workspace --profile test --bins
took

step "acres_msgs against the rosidl-generated acres_interfaces"
# The example as `cargo test --workspace` built it (test profile, the workspace's features): a
# `cargo run -p acres_msgs` would resolve other features and build again in another profile.
cargo build --quiet --workspace --profile test --example rosidl_types
target/debug/examples/rosidl_types > target/acres_msgs_types.json
python3 tests/ros/check_rosidl_types.py target/acres_msgs_types.json
took

step "rclpy against the nodes, inside unshare -n (pytest tests/ros)"
unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST; exec python3 -m pytest -p no:cacheprovider -q -rA tests/ros'
took

if [ "${ACRES_ROS_SKIP_R2R:-0}" != 1 ]; then
    # One build shape for every r2r step: the whole workspace's features plus acres_ros/r2r, the
    # test profile. Cargo then reuses every unit test.sh built whose features r2r does not change
    # (tokio, serde, rustls, RustDDS...) and compiles r2r, its build tools (bindgen) and the crates
    # above acres_ros. A `-p` selection would resolve other feature sets and rebuild nearly all
    # (docs/ros.md, "One build"). The tests leave out packages with no r2r code and no features of
    # their own (excluding one changes no feature: the units stay the same) and the harness's own
    # tests (the bridge's tests still build the harness library).
    # (cargo-nextest's own `--profile` is its test profile: cargo's is `--cargo-profile`.)
    r2r_feat=(--workspace --features acres_ros/r2r)
    r2r_skip=(--exclude acres-harness --exclude acres_farm --exclude acres_scenario --exclude acres_msgs)
    on_r2r=("${r2r_feat[@]}" "${r2r_skip[@]}" --cargo-profile test)
    in_netns() {
        # The inner shell expands $ACRES_ROS_LIBPYTHON (exported by ros_env.sh), not this one.
        # shellcheck disable=SC2016
        unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; export ACRES_REQUIRE_NETNS=1 ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST LD_PRELOAD="$ACRES_ROS_LIBPYTHON"; exec "$@"' sh "$@"
    }
    nodes=(acres_core_node acres_vehicle_node acres_bridge)
    keep_nodes() { # keep_nodes DIR: the node executables now in target/debug, copied to DIR
        mkdir -p "$1"
        for n in "${nodes[@]}"; do cp -f "target/debug/$n" "$1/$n"; done
    }
    keep_nodes target/nodes-rustdds
    step "the nodes on r2r: clippy -D warnings, build, the r2r test binaries (acres_ros with the feature r2r)"
    cargo clippy --quiet "${r2r_feat[@]}" "${r2r_skip[@]}" --profile test --all-targets -- -D warnings
    cargo build --quiet "${r2r_feat[@]}" --profile test --bins
    # The r2r test binaries of the steps below, built here: built by one lane while the other's
    # timing tests run, they would take the CPU from under them.
    cargo test --quiet "${r2r_feat[@]}" "${r2r_skip[@]}" --profile test --lib --test skills_over_dds --test link_sim \
        --test link_faults --no-run
    keep_nodes target/nodes-r2r
    took
    # Each test in a process of its own (cargo-nextest): r2r has one rcl context per process, and
    # rcl fixes its domain when it is made, while every test here has a domain of its own. The
    # harness the link tests start is test.sh's own (target/debug/acres-harness: no ROS in it).
    # Two lanes side by side, each in a private network namespace of its own (they wait on real
    # time, not the CPU): acres_ros's unit tests and the DDS tests in the background; the rclpy
    # tests against the r2r nodes and the link subset here. Both lanes build with the r2r
    # features only (a build with other features would link other node executables into
    # target/debug, where the link subset finds its nodes).
    step "r2r, two lanes: acres_ros's unit tests and the DDS tests | the rclpy tests and the link subset (r2r nodes; nextest), each inside unshare -n"
    lane_log="$ROOT/target/ros-test-r2r-dds.log"
    in_netns cargo nextest run --no-fail-fast "${on_r2r[@]}" --lib --test skills_over_dds --run-ignored all --test-threads 1 \
        -E 'package(acres_ros) | binary(skills_over_dds)' >"$lane_log" 2>&1 &
    lane_pid=$!
    lane_rc=0
    ACRES_BIN_DIR="$ROOT/target/nodes-r2r" ACRES_NODES_BACKEND=r2r \
        in_netns python3 -m pytest -p no:cacheprovider -q -rA tests/ros || lane_rc=$?
    in_netns cargo nextest run --no-fail-fast "${on_r2r[@]}" --test link_sim --test link_faults --run-ignored all --test-threads 1 \
        -E 'test(link_sim_f56_succeeds_and_validates) | test(harness_killed_cancels_the_goal) | test(harness_frozen_the_vehicle_applies_on_cancel) | test(the_vehicle_node_runs_the_scenarios_learned_skill)' \
        || lane_rc=$?
    wait "$lane_pid" || lane_rc=$?
    echo "== ros_test: acres_ros's unit tests and the DDS tests on r2r:"
    cat "$lane_log"
    [ "$lane_rc" = 0 ] || { echo "== ros_test: an r2r lane failed" >&2; exit "$lane_rc"; }
    took
    # Across the backends, the same DDS tests: the r2r client (Fast DDS) against the RustDDS nodes,
    # and the RustDDS client (test.sh's own test binary) against the r2r nodes. The deadman's
    # 20-stall p99 (105 s a run) is measured on each backend's own pair (the DDS step and the step
    # above), not again across: the cross steps test the skill and deadman behaviour, and the
    # deadman is the node's (its timing is the nodes' backend, whoever beats).
    # The two wait on real time, not the CPU: side by side, each in a namespace of its own, through
    # nextest (cargo's build lock only while building), the second's output after the first's.
    step "across the backends, side by side: r2r clients against the RustDDS nodes, the RustDDS client against the r2r nodes (skills_over_dds; nextest), each inside unshare -n"
    cross_log="$ROOT/target/ros-test-cross.log"
    ACRES_NODES_DIR="$ROOT/target/nodes-r2r" ACRES_NODES_BACKEND=r2r \
        in_netns cargo nextest run --no-fail-fast --workspace --cargo-profile test --test skills_over_dds --run-ignored all \
        --test-threads 1 -E 'not test(the_last_beat_to_standstill_p99)' >"$cross_log" 2>&1 &
    cross_pid=$!
    cross_rc=0
    ACRES_NODES_DIR="$ROOT/target/nodes-rustdds" ACRES_NODES_BACKEND=rustdds \
        in_netns cargo nextest run --no-fail-fast "${on_r2r[@]}" --test skills_over_dds --run-ignored all --test-threads 1 \
        -E 'not test(the_last_beat_to_standstill_p99)' || cross_rc=$?
    wait "$cross_pid" || cross_rc=$?
    echo "== ros_test: the RustDDS client against the r2r nodes:"
    cat "$cross_log"
    [ "$cross_rc" = 0 ] || { echo "== ros_test: a step across the backends failed" >&2; exit "$cross_rc"; }
    took
    # The r2r build put its node executables in target/debug; this puts test.sh's back (fresh
    # units: cargo only links them into place again).
    cargo build --quiet --workspace --profile test --bins
fi

echo "== ros_test: ok in $(( $(date +%s) - t0 )) s"
