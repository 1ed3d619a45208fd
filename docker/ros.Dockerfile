# syntax=docker/dockerfile:1
# The image of a ROS 2 site: the acres ROS packages built with colcon on the official ROS image,
# their tests, then a slim runtime with the node executables, the launch files and the scenarios.
#
#   docker build -f docker/ros.Dockerfile -t acres-ros .                 # from the repository root
#   docker build -f docker/ros.Dockerfile --target test .                # the ROS tests only
#
# BASE: any image with ROS 2 Jazzy under /opt/ros/jazzy (the official one by default).
ARG BASE=ros:jazzy-ros-base

FROM ${BASE} AS build
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
WORKDIR /ws/src/acres
COPY . .
WORKDIR /ws
# The whole tree: acres_interfaces (rosidl) and every ament_cargo package, release builds.
RUN . /opt/ros/jazzy/setup.sh \
    && colcon build --base-paths src/acres --cargo-args --release \
    && mkdir -p install/acres_bridge/share/acres_bridge \
    && cp -r src/acres/launch src/acres/scenarios install/acres_bridge/share/acres_bridge/

FROM build AS test
# The ROS tests: colcon's own, then the link tests of the bridge (real processes, loopback DDS).
ENV ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
RUN . /opt/ros/jazzy/setup.sh \
    && colcon test --base-paths src/acres --ctest-args --output-on-failure \
    && colcon test-result --verbose

FROM ${BASE} AS runtime
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# The install folder of the build (executables, launch files, scenarios, the rosidl messages) and
# the harness binary for the harness side of a field test.
COPY --from=build /ws/install /opt/acres
COPY --from=build /ws/src/acres/target/release/acres-harness /usr/local/bin/acres-harness
COPY docker/entrypoint.sh /usr/local/bin/acres-entrypoint
RUN apt-get update \
    && apt-get install -y --no-install-recommends procps \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 acres
# The non-root user acres (uid 1000).
USER 1000
WORKDIR /home/acres
ENV ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ACRES_SHARE=/opt/acres/acres_bridge/share/acres_bridge
# Healthy while a ROS node or the harness of this container runs (a container runs one role).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["pgrep", "-f", "acres_(core_node|vehicle_node|bridge)|acres-harness|ros2 launch"]
ENTRYPOINT ["/usr/local/bin/acres-entrypoint"]
CMD ["ros2", "launch", "/opt/acres/acres_bridge/share/acres_bridge/launch/sim_link.launch.py"]
