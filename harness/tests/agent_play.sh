#!/usr/bin/env bash
# Plays a one-field scenario through the line protocol face, as a shell script would:
#   ACRES_HARNESS=path/to/acres-harness ACRES_AGENT_SOCKET=/tmp/x.sock agent_play.sh FIELD
# The server (`acres-harness agent serve ... --socket "$ACRES_AGENT_SOCKET"`) runs already.
# Every command prints one JSON line; the script stops at the first that is not ok.
set -euo pipefail

H="${ACRES_HARNESS:-acres-harness}"
FIELD="${1:?usage: agent_play.sh FIELD}"

# Ends the turn until the wake-up says that SKILL ended; fails unless it succeeded.
wait_for_skill() {
    local skill="$1" reply
    while true; do
        reply="$("$H" agent wait)"
        echo "$reply"
        if [[ "$reply" == *'"reason":"skill_ended"'* && "$reply" == *"\"skill\":\"$skill\""* ]]; then
            [[ "$reply" == *'"code":"succeeded"'* ]] || { echo "$skill did not succeed" >&2; exit 1; }
            return 0
        fi
    done
}

# A tool refused before the start: the phase says why.
if "$H" agent send read '{"what": "vehicle"}'; then
    echo "a tool was taken before the start" >&2
    exit 1
fi
"$H" agent wait
"$H" agent status
"$H" agent send read '{"what": "mission"}'
"$H" agent send plan "{\"visits\": [\"$FIELD\"]}"
"$H" agent send dispatch "{\"skill\": \"goto\", \"arguments\": {\"field\": \"$FIELD\"}}"
wait_for_skill goto
"$H" agent send dispatch "{\"skill\": \"scout\", \"arguments\": {\"field\": \"$FIELD\"}}"
wait_for_skill scout
"$H" agent send dispatch '{"skill": "return_home"}'
wait_for_skill return_home
"$H" agent end
