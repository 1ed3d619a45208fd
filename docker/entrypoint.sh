#!/bin/bash
# The image's entry point: ROS 2 Jazzy and the acres install sourced, then the command (by
# default the simulated stack's launch file). The link token, when the container has the secret
# link_token, comes from /run/secrets/link_token into ACRES_LINK_TOKEN (never on a command line).
set -eo pipefail
# shellcheck source=/dev/null
. /opt/ros/jazzy/setup.bash
# colcon's setup.bash where colcon-bash made one (the official image); else its setup.sh, told
# where the install folder is now (it was /ws/install at build time).
if [ -r /opt/acres/setup.bash ]; then
    # shellcheck source=/dev/null
    . /opt/acres/setup.bash
else
    # shellcheck source=/dev/null
    COLCON_CURRENT_PREFIX=/opt/acres . /opt/acres/setup.sh
fi
if [ -z "${ACRES_LINK_TOKEN:-}" ] && [ -r /run/secrets/link_token ]; then
    ACRES_LINK_TOKEN=$(cat /run/secrets/link_token)
    export ACRES_LINK_TOKEN
fi
exec "$@"
