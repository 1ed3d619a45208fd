#!/usr/bin/env bash
# A bounded run of the link's line-decoder fuzz target (bridge/protocol/fuzz) with libFuzzer:
#   tools/fuzz_link.sh [RUNS] [SECONDS]   (default 200000 inputs, no time limit)
# It stops after RUNS inputs or SECONDS seconds, whichever comes first; a crash fails it (the
# input is kept in bridge/protocol/fuzz/artifacts/). cargo-fuzz needs nightly features; on a
# stable toolchain RUSTC_BOOTSTRAP=1 enables them for this build only. cargo-fuzz is installed
# with `cargo install` when missing.
set -euo pipefail
cd "$(dirname "$0")/../bridge/protocol"
runs="${1:-200000}"
seconds="${2:-0}"
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
mkdir -p fuzz/corpus/decode_line
# Seeds: one line of each kind, a step among them.
printf '%s\n' '{"type":"beat","n":1}' > fuzz/corpus/decode_line/beat
printf '%s\n' '{"type":"skill","id":1,"goal":{"skill":"goto","place":"","field":"F53","seconds":null,"speed_cap_mps":null}}' > fuzz/corpus/decode_line/skill
printf '%s\n' '{"type":"attach","version":3,"harness":"h","nonce":"00","proof":"ab"}' > fuzz/corpus/decode_line/attach
printf '%s\n' '{"type":"pong","n":3,"t_s":1.5}' > fuzz/corpus/decode_line/pong
printf '%s\n' '{"type":"step","seq":42,"observation":{"header":{"stamp":{"sec":12,"nanosec":350000000},"frame_id":"map"},"x_m":41.5,"y_m":-3.25,"yaw_rad":0.0,"speed_mps":3.9,"odom_m":41.6,"skill":"goto","skill_id":1,"state":"running","progress":0.12,"target":"F53","remaining_m":301.0,"ahead_m":"inf","shield_holding":false,"hold_since_s":null,"interrupted_skill":"","interrupted_id":0,"interrupted_target":"","coverage":[],"scouted":[],"energy_estimate_mj":0.82,"route_ahead":[{"x":41.5,"y":-3.4,"z":0.0}]},"events":[{"header":{"stamp":{"sec":12,"nanosec":300000000},"frame_id":"map"},"event":"skill_started","skill_id":1,"skill":"goto","code":"","cause":"","target":"F53","route_m":342.5,"remaining_m":null,"progress":0.0,"seconds":null,"resumes_id":0,"ahead_m":null,"stopping_m":null,"hold_at":{"x":null,"y":null,"z":null},"held_s":null,"why":"","field":""}],"sweep":{"t_s":12.3,"points":1,"data":"AACAPwAAAEAAAAA/AACAPw=="},"truth":null,"dropped_sweeps":0}' > fuzz/corpus/decode_line/step
RUSTC_BOOTSTRAP=1 cargo fuzz run decode_line fuzz/corpus/decode_line -- \
    -runs="$runs" -max_total_time="$seconds" -max_len=4096
