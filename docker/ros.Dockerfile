# The image of a ROS 2 site: the acres ROS packages built with colcon on the official ROS image,
# their tests, then a slim runtime with the node executables, the launch files and the scenarios.
#
#   docker build -f docker/ros.Dockerfile -t acres-ros .                 # from the repository root
#   docker build -f docker/ros.Dockerfile --target test .                # the ROS tests only
#
# BuildKit (DOCKER_BUILDKIT=1 or buildx) is required: the build keeps cargo's target folder in a
# cache mount. No `# syntax=` line: the Dockerfile frontend built into the engine is used, so a
# build needs no registry for it (tools/docker_ci.sh builds this file with no network at all).
#
# BASE: any image with ROS 2 Jazzy under /opt/ros/jazzy (the official one by default).
# TOOLCHAIN: the image the build starts from: the stage `toolchain` below by default (Rust from
#   rustup, cargo-ament-build, the colcon plugins: it downloads them), or an image that has all of
#   that already (tools/docker_ci.sh passes one made with no network: docs/field-tests.md).
# CARGO_PROFILE: the cargo profile of the packages (release; `colcon`: unoptimised, the fastest
#   build, tools/docker_ci.sh's; empty: cargo's dev profile, the one the project's tests run with).
ARG BASE=ros:jazzy-ros-base
ARG TOOLCHAIN=toolchain

FROM ${BASE} AS toolchain
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Rust from rustup (Debian's is too old); colcon-ros-cargo builds the ament_cargo packages through
# cargo-ament-build. Versions pinned as in tools/constraints-test.txt and tools/colcon_check.sh.
ARG RUST_VERSION=1.95.0
ENV RUSTUP_HOME=/opt/rustup CARGO_HOME=/opt/cargo PATH=/opt/cargo/bin:${PATH}
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl ca-certificates build-essential python3-pip \
    && rm -rf /var/lib/apt/lists/*
RUN curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
    | sh -s -- -y --profile minimal --default-toolchain "${RUST_VERSION}" \
    && cargo install --locked cargo-ament-build --version 0.1.11 \
    && pip3 install --no-cache-dir --break-system-packages colcon-cargo==0.2.0 colcon-ros-cargo==0.2.0

FROM ${TOOLCHAIN} AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG CARGO_PROFILE=release
WORKDIR /ws/src/acres
COPY . .
WORKDIR /ws
# The whole tree: acres_interfaces (rosidl) and every ament_cargo package. colcon gives each cargo
# package a target folder of its own (build/<pkg>): here they are links to one folder, a cache
# mount, so the shared crates compile once and a rebuild is incremental (as tools/colcon_check.sh).
RUN --mount=type=cache,id=acres-cargo-target,target=/ws/build/cargo \
    . /opt/ros/jazzy/setup.sh \
    && for pkg in $(colcon list --base-paths src/acres --names-only); do \
        if [ "$pkg" != acres_interfaces ]; then mkdir -p build && ln -sfn cargo "build/$pkg"; fi; \
    done \
    && colcon build --base-paths src/acres ${CARGO_PROFILE:+--cargo-args --profile "${CARGO_PROFILE}"} \
    && mkdir -p install/acres_bridge/share/acres_bridge \
    && cp -r src/acres/launch src/acres/scenarios install/acres_bridge/share/acres_bridge/

FROM build AS test
# The ROS tests of the project (tests/ros: rclpy on rmw_fastrtps_cpp against the installed core
# and vehicle nodes, the generated acres_interfaces types and their type hashes), real DDS on the
# build's loopback; they refuse to run unless the build's network namespace has `lo` alone. Before
# them, tools/colcon_check.sh's checks of a colcon install (the executables start and refuse bad
# parameters with exit 2, the installed harness runs a scenario, install/setup.sh exports every
# package and the generated types): the test command's one colcon build is this one.
ENV ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
RUN . /opt/ros/jazzy/setup.sh \
    && . install/setup.sh \
    && mkdir -p /tmp/acres-bin \
    && ln -s /ws/install/acres_core/lib/acres_core/acres_core_node /tmp/acres-bin/ \
    && ln -s /ws/install/acres_vehicle_node/lib/acres_vehicle_node/acres_vehicle_node /tmp/acres-bin/ \
    && ACRES_COLCON_WS=/ws ACRES_COLCON_PHASE=installed ACRES_COLCON_ROS=1 src/acres/tools/colcon_check.sh \
    && ACRES_BIN_DIR=/tmp/acres-bin ACRES_ROS_INTERFACES=/ws/install/acres_interfaces \
        python3 -m pytest -p no:cacheprovider -q -rA src/acres/tests/ros \
    && touch /ws/tests-passed

FROM ${BASE} AS runtime
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# The install folder of the build (executables, launch files, scenarios, the rosidl messages), the
# harness for the harness side of a field test. procps (pgrep, for the healthcheck) when missing.
COPY --from=build /ws/install /opt/acres
COPY docker/entrypoint.sh /usr/local/bin/acres-entrypoint
# The harness's model configurations (its default folder is the build's source tree).
COPY harness/model_configs /opt/acres/acres-harness/share/acres-harness/model_configs
RUN if ! command -v pgrep >/dev/null; then \
        apt-get update && apt-get install -y --no-install-recommends procps && rm -rf /var/lib/apt/lists/*; \
    fi \
    && ln -s /opt/acres/acres-harness/bin/acres-harness /usr/local/bin/acres-harness \
    && useradd --create-home --uid 1000 acres \
    && mkdir -p /run/acres /runs \
    && chown acres:acres /run/acres /runs
# The non-root user acres (uid 1000); /run/acres (the bridge's TLS identity) and /runs (the run
# folders) are the compose file's volumes, made here so that they belong to that user.
USER 1000
WORKDIR /home/acres
ENV ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ACRES_SHARE=/opt/acres/acres_bridge/share/acres_bridge \
    ACRES_MODEL_CONFIGS=/opt/acres/acres-harness/share/acres-harness/model_configs
# Healthy while a ROS node or the harness of this container runs (a container runs one role).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["pgrep", "-f", "acres_(core_node|vehicle_node|bridge)|acres-harness|ros2 launch"]
ENTRYPOINT ["/usr/local/bin/acres-entrypoint"]
CMD ["ros2", "launch", "/opt/acres/acres_bridge/share/acres_bridge/launch/sim_link.launch.py"]
