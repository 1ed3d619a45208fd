#!/usr/bin/env bash
# The proof of the ROS package layout, with no ROS installation (ARCHITECTURE.md, "ROS packages"):
#   1. every package.xml validates with catkin_pkg and agrees with its Cargo.toml;
#   2. `colcon list` finds every package with its build type (exactly the expected list);
#   3. `colcon build` of every package succeeds — with ROS sourced (ACRES_COLCON_ROS=1, e.g. after
#      `. tools/ros_env.sh`) the rosidl interface package acres_interfaces too (ament_cmake +
#      rosidl), without ROS every package but that one — and leaves the node executables where
#      `ros2 run` looks for them, install/<pkg>/lib/<pkg>/<exe>, and the harness in
#      install/acres-harness/bin; each installed executable starts and refuses a missing
#      parameter with exit code 2 (before any DDS participant exists);
#   4. with ROS: install/setup.sh is usable: sourced in a fresh sh, it puts every package on
#      AMENT_PREFIX_PATH and the generated acres_interfaces types on PYTHONPATH (imported), and
#      the type descriptions (share/acres_interfaces/msg/*.json) are installed.
#
# Needs the Python packages of tools/requirements-test.txt (colcon-core, colcon-cargo,
# colcon-ros-cargo, colcon-package-information, colcon-package-selection, catkin_pkg) on PATH,
# and installs cargo-ament-build (crates.io) under target/tools when it is missing.
#
# colcon gives each package its own cargo --target-dir (build/<pkg>), which would compile the
# shared dependencies once per package; here build/<pkg> are links to one folder so they compile
# once (a plain `colcon build` does the same work, only slower). The build uses the `colcon`
# cargo profile (unoptimised, no debug info): it proves the build and the layout, not speed.
#
# ACRES_COLCON_PHASE picks the parts (default `all`):
#   all        1 to 4 in a fresh workspace $ACRES_COLCON_WS (removed at the end);
#   layout     1 and 2 only, no build (the test command's host step);
#   installed  the checks of 3 and 4 on a workspace colcon already built (no build, nothing of it
#              removed): docker/ros.Dockerfile's test stage runs them on the image's own `colcon
#              build` of the same tree, profile and ROS, so the test command makes one cold colcon
#              build, not two.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WS="${ACRES_COLCON_WS:-$ROOT/target/colcon-ws}"
TOOLS="$ROOT/target/tools"
PHASE="${ACRES_COLCON_PHASE:-all}"
case "$PHASE" in
    all | layout | installed) ;;
    *) echo "colcon_check: ACRES_COLCON_PHASE=$PHASE: expected all, layout or installed" >&2; exit 2 ;;
esac

if [ "$PHASE" = all ] && ! cargo ament-build --help >/dev/null 2>&1; then
    if ! [ -x "$TOOLS/bin/cargo-ament-build" ]; then
        echo "== installing cargo-ament-build into $TOOLS"
        cargo install --quiet --locked --root "$TOOLS" cargo-ament-build --version 0.1.11
    fi
    export PATH="$TOOLS/bin:$PATH"
fi
[ "$PHASE" = installed ] || for tool in colcon python3; do
    command -v "$tool" >/dev/null || { echo "colcon_check: $tool not on PATH (pip install -r tools/requirements-test.txt)" >&2; exit 2; }
done

if [ "$PHASE" != installed ]; then
    echo "== package.xml files (catkin_pkg) and their Cargo.toml"
    python3 "$ROOT/tools/check_package_xml.py"

    echo "== colcon list"
    expected="acres-harness	harness	(cargo)
acres_bridge	bridge/node	(ament_cargo)
acres_core	ros_pkgs/acres_core	(ament_cargo)
acres_farm	ros_pkgs/acres_farm	(ament_cargo)
acres_interfaces	ros_pkgs/acres_interfaces	(ros.ament_cmake)
acres_link_protocol	bridge/protocol	(ament_cargo)
acres_local_planners	ros_pkgs/acres_local_planners	(ament_cargo)
acres_msgs	ros_pkgs/acres_msgs	(ament_cargo)
acres_ros	ros_pkgs/acres_ros	(ament_cargo)
acres_scenario	ros_pkgs/acres_scenario	(ament_cargo)
acres_vehicle	ros_pkgs/acres_vehicle	(ament_cargo)
acres_vehicle_node	ros_pkgs/acres_vehicle_node	(ament_cargo)"
    listed="$(cd "$ROOT" && colcon --log-base /dev/null list)"
    echo "$listed"
    if [ "$listed" != "$expected" ]; then
        echo "colcon_check: colcon list differs from the expected packages:" >&2
        diff <(echo "$expected") <(echo "$listed") >&2 || true
        exit 1
    fi
fi
if [ "$PHASE" = layout ]; then echo "colcon_check: layout ok (ACRES_COLCON_PHASE=layout: no build)"; exit 0; fi

with_ros="${ACRES_COLCON_ROS:-0}"
skip=(--packages-skip acres_interfaces)
what="all but acres_interfaces: no ROS sourced"
if [ "$with_ros" = 1 ]; then
    [ -n "${AMENT_PREFIX_PATH:-}" ] || { echo "colcon_check: ACRES_COLCON_ROS=1 but no ROS is sourced (AMENT_PREFIX_PATH empty)" >&2; exit 2; }
    skip=()
    what="every package, acres_interfaces by rosidl: ROS $ROS_DISTRO sourced"
fi
if [ "$PHASE" = all ]; then
    echo "== colcon build ($what) in $WS"
    rm -rf "$WS"
    mkdir -p "$WS/build/shared"
    for pkg in $(echo "$listed" | cut -f1); do
        [ "$pkg" = acres_interfaces ] || ln -s shared "$WS/build/$pkg"
    done
    start=$(date +%s)
    if ! (cd "$WS" && colcon build --base-paths "$ROOT" "${skip[@]}" \
            --cargo-args --profile colcon >"$WS/build.log" 2>&1); then
        grep -v '^{"packages"' "$WS/build.log" | tail -40 >&2
        echo "colcon_check: colcon build failed (log: $WS/build.log)" >&2
        exit 1
    fi
    grep -E '^(Starting|Finished|Summary)' "$WS/build.log"
    echo "colcon build took $(( $(date +%s) - start )) s"
else
    [ -d "$WS/install" ] || { echo "colcon_check: ACRES_COLCON_PHASE=installed: no $WS/install (build it with colcon first)" >&2; exit 2; }
    echo "== the colcon workspace $WS, built already ($what)"
fi

echo "== installed executables"
# The nodes parse their arguments before they create a DDS participant; they run in a private
# network namespace all the same (NETWORK SAFETY in ARCHITECTURE.md), and not at all without one.
# Inside the image's build (docker/ros.Dockerfile's test stage) the namespace is private already,
# loopback alone, and unshare is not permitted: there they run as they are.
if [ "$(ls /sys/class/net 2>/dev/null)" = lo ]; then
    netns() { "$@"; }
elif unshare -n true 2>/dev/null; then
    netns() { unshare -n sh -c 'set -e; ip link set lo up; exec "$@"' sh "$@"; }
else
    echo "colcon_check: unshare -n is not available; the nodes are not started outside a private network namespace" >&2
    exit 2
fi
for exe in acres_core/lib/acres_core/acres_core_node acres_vehicle_node/lib/acres_vehicle_node/acres_vehicle_node \
           acres_bridge/lib/acres_bridge/acres_bridge; do
    path="$WS/install/$exe"
    [ -x "$path" ] || { echo "colcon_check: $path missing or not executable" >&2; exit 1; }
    set +e
    out="$(netns "$path" --ros-args -p no_such_parameter:=1 -p port:=not_a_port -p rate:=x 2>&1 </dev/null)"
    code=$?
    set -e
    if [ "$code" != 2 ]; then
        echo "colcon_check: $exe exited $code on bad parameters (expected 2): $out" >&2
        exit 1
    fi
    echo "$exe: runs; bad parameters refused (exit 2): ${out%%$'\n'*}"
done
harness="$WS/install/acres-harness/bin/acres-harness"
[ -x "$harness" ] || { echo "colcon_check: $harness missing" >&2; exit 1; }
"$harness" --version
# The installed harness runs a shipped scenario in the in-process world.
run_out="$WS/run"
netns "$harness" run --scenario "$ROOT/scenarios/t1_01_one_field.json" --model scripted --out "$run_out" >/dev/null
"$harness" validate "$run_out" | tail -1

if [ "$with_ros" = 1 ]; then
    echo "== install/setup.sh (a fresh sh, ROS's variables as the sourcing shell has them)"
    for f in Observation SkillEvent Heartbeat; do
        [ -s "$WS/install/acres_interfaces/share/acres_interfaces/msg/$f.json" ] || { echo "colcon_check: $f.json not installed" >&2; exit 1; }
    done
    # shellcheck disable=SC2016 # $AMENT_PREFIX_PATH is expanded by the inner sh
    if ! out="$(cd "$WS" && sh -c '. install/setup.sh && python3 -c "import acres_interfaces.msg, acres_interfaces.action, sys; print(acres_interfaces.msg.__file__)" && echo "$AMENT_PREFIX_PATH"' 2>&1)"; then
        echo "colcon_check: install/setup.sh: $out" >&2
        exit 1
    fi
    echo "$out" | head -1
    for pkg in acres_interfaces acres_core acres_vehicle acres_vehicle_node acres_bridge; do
        case ":$(echo "$out" | tail -1):" in
            *":$WS/install/$pkg:"*) ;;
            *) echo "colcon_check: install/setup.sh puts no $pkg on AMENT_PREFIX_PATH: $out" >&2; exit 1 ;;
        esac
    done
    case "$(echo "$out" | head -1)" in
        "$WS/install/acres_interfaces/"*) echo "acres_interfaces imported from the colcon install" ;;
        *) echo "colcon_check: acres_interfaces imported from elsewhere: $out" >&2; exit 1 ;;
    esac
fi
if [ "$PHASE" = all ]; then rm -rf "$WS"; else rm -rf "$run_out"; fi
echo "colcon_check: ok"
