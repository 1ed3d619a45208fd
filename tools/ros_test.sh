#!/usr/bin/env bash
# The tests with a real ROS 2 (issue 19), a step of tools/test.sh; runs on its own too:
#   1. the project's ROS 2 Jazzy environment from PyPI (tools/ros_env.sh: made once, then cached
#      in .ros_env/), acres_interfaces built by rosidl into it;
#   2. the Rust types of acres_msgs against what rosidl generated (tests/ros/check_rosidl_types.py:
#      field names, types, order, constants, RIHS01 type hashes);
#   3. rclpy clients (rmw_fastrtps_cpp, the generated acres_interfaces types) against the core
#      node and the vehicle node (RustDDS, built here by cargo): pytest tests/ros, inside a private
#      network namespace;
#   4. the r2r backend: the nodes with the feature acres_ros/r2r (clippy, build, the rclpy tests
#      and the DDS tests against them; the link subset with ACRES_ROS_R2R_SUITES=1), and
#      ros_pkgs/acres_ros_r2r (a workspace of its own) against the RustDDS nodes, inside a
#      private network namespace.
#      Both build in the one target dir (target/): only the crates whose features the r2r graph
#      changes are compiled again; the dependencies the earlier steps built are reused. The r2r
#      build replaces the node executables in target/debug (cargo puts them back at the next
#      plain build), so the RustDDS steps run before it.
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
cargo run --quiet -p acres_msgs --example rosidl_types > target/acres_msgs_types.json
python3 tests/ros/check_rosidl_types.py target/acres_msgs_types.json
took

step "rclpy against the nodes, inside unshare -n (pytest tests/ros)"
unshare -n sh -c 'ip link set lo up; ip link set lo multicast on; export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST; exec python3 -m pytest -p no:cacheprovider -q -rA tests/ros'
took

if [ "${ACRES_ROS_SKIP_R2R:-0}" != 1 ]; then
    # The nodes on the r2r backend (the feature acres_ros/r2r, chosen at build time); the tests'
    # own nodes are r2r ones too (the same feature). r2r binaries run with libpython preloaded
    # (docs/ros.md: the PyPI wheels' type supports need its symbols).
    on_r2r=(--features acres_ros/r2r)
    in_netns() {
        # The inner shell expands $ACRES_ROS_LIBPYTHON (exported by ros_env.sh), not this one.
        # shellcheck disable=SC2016
        unshare -n sh -c 'ip link set lo up; ip link set lo multicast on; export ACRES_REQUIRE_NETNS=1 ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST LD_PRELOAD="$ACRES_ROS_LIBPYTHON"; exec "$@"' sh "$@"
    }
    step "the nodes on r2r: clippy -D warnings, build (acres_ros with the feature r2r)"
    cargo clippy --quiet "${on_r2r[@]}" -p acres_ros -p acres_core -p acres_vehicle -p acres_bridge --all-targets -- -D warnings
    cargo build --quiet "${on_r2r[@]}" -p acres_core -p acres_vehicle -p acres_bridge
    cargo test --quiet "${on_r2r[@]}" -p acres_ros --lib
    took
    step "rclpy against the r2r nodes, inside unshare -n (pytest tests/ros)"
    ACRES_BIN_DIR="$ROOT/target/debug" ACRES_NODES_BACKEND=r2r \
        in_netns python3 -m pytest -p no:cacheprovider -q -rA tests/ros
    took
    # Each test in a process of its own (cargo-nextest): r2r has one rcl context per process, and
    # rcl fixes its domain when it is made, while every test here has a domain of its own.
    step "the DDS tests on r2r (skills_over_dds: r2r test client against the r2r nodes; nextest), inside unshare -n"
    in_netns cargo nextest run --no-fail-fast "${on_r2r[@]}" -p acres_vehicle --test skills_over_dds --run-ignored all --test-threads 1
    took
    # The link subset on r2r passes (docs/ros.md) but costs about 10 min more here (the bridge's
    # tests build the harness library on the r2r feature set): run only when asked,
    # ACRES_ROS_R2R_SUITES=1. The harness they start is test.sh's own (it knows no ROS).
    if [ "${ACRES_ROS_R2R_SUITES:-0}" = 1 ]; then
        step "the link tests on r2r (a subset: see docs/ros.md; nextest), inside unshare -n"
        in_netns cargo nextest run --no-fail-fast "${on_r2r[@]}" -p acres_bridge --test link_sim --test link_faults --run-ignored all --test-threads 1 \
            -E 'test(link_sim_f56_succeeds_and_validates) | test(harness_killed_cancels_the_goal) | test(harness_frozen_the_vehicle_applies_on_cancel) | test(the_vehicle_node_runs_the_scenarios_learned_skill)'
        took
    fi
    r2r=(--manifest-path ros_pkgs/acres_ros_r2r/Cargo.toml --target-dir target)
    step "the r2r crate (subset of issue 19's first slice): fmt, clippy -D warnings, build"
    cargo fmt --manifest-path ros_pkgs/acres_ros_r2r/Cargo.toml -- --check
    cargo clippy --quiet "${r2r[@]}" --all-targets -- -D warnings
    cargo build --quiet "${r2r[@]}" --tests
    took
    step "the r2r crate against the RustDDS nodes, inside unshare -n"
    # The r2r build above put its node executables in target/debug; this puts the RustDDS ones
    # back (fresh units: cargo only links them into place again).
    cargo build --quiet --workspace --profile test --bins
    unshare -n sh -c 'ip link set lo up; ip link set lo multicast on; export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST; exec "$@"' \
        sh cargo test --quiet "${r2r[@]}" -- --include-ignored --test-threads=1
    took
fi

echo "== ros_test: ok in $(( $(date +%s) - t0 )) s"
