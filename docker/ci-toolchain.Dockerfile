# The toolchain image of tools/docker_ci.sh (docker/ros.Dockerfile's TOOLCHAIN when no network is
# reachable): the ROS layer it imported (ROS_IMAGE), the host's Rust toolchain, cargo-ament-build
# and the crates of Cargo.lock (a `cargo fetch`ed CARGO_HOME), cargo offline. The build context is
# the folder docker_ci.sh prepares (cargo/: bin, lib, libexec, registry).
ARG ROS_IMAGE=acres-ci-ros:latest
FROM ${ROS_IMAGE}
COPY cargo /opt/cargo
ENV CARGO_HOME=/opt/cargo PATH=/opt/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CARGO_NET_OFFLINE=true
