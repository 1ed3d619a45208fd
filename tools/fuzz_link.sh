#!/usr/bin/env bash
# A bounded run of the link's line-decoder fuzz target (bridge/protocol/fuzz) with libFuzzer:
#   tools/fuzz_link.sh [RUNS]   (default 200000 inputs)
# cargo-fuzz needs nightly features; on a stable toolchain RUSTC_BOOTSTRAP=1 enables them for
# this build only. cargo-fuzz is installed with `cargo install` when missing.
set -euo pipefail
cd "$(dirname "$0")/../bridge/protocol"
runs="${1:-200000}"
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
mkdir -p fuzz/corpus/decode_line
# Seeds: one line of each message type.
printf '%s\n' '{"type":"beat","n":1}' > fuzz/corpus/decode_line/beat
printf '%s\n' '{"type":"skill","id":1,"goal":{"skill":"goto","place":"","field":"F53","seconds":null,"speed_cap_mps":null}}' > fuzz/corpus/decode_line/skill
printf '%s\n' '{"type":"attach","version":1,"harness":"h","token":"t"}' > fuzz/corpus/decode_line/attach
printf '%s\n' '{"type":"pong","n":3,"t_s":1.5}' > fuzz/corpus/decode_line/pong
RUSTC_BOOTSTRAP=1 cargo fuzz run decode_line fuzz/corpus/decode_line -- -runs="$runs" -max_len=4096
