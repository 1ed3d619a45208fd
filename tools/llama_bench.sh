#!/usr/bin/env bash
# A benchmark, not a test: the shipped suite (scenarios/*.json) in text and checked modes through
# llama.cpp's llama-server serving SmolLM2-135M-Instruct (tools/llama_server.sh: built or found
# cached), one sweep, its leaderboard printed, then the harness's overhead per model call against
# the server's own prompt and generation times (the `timings` llama-server logs for each request).
#
#   tools/llama_bench.sh [HARNESS_BINARY] [OUT]     (default target/debug/acres-harness, target/llama-bench)
#
# The server and the sweep run inside a private network namespace (unshare -n, loopback only).
# The tiny model is expected to fail the missions: the figures are the harness's, not a claim
# about the model. Nothing is asserted; everything is printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
harness="$(realpath "${1:-target/debug/acres-harness}")"
out="$(realpath -m "${2:-target/llama-bench}")"
[ -x "$harness" ] || { echo "llama_bench.sh: no harness binary at $harness (cargo build first)" >&2; exit 2; }
calls="${ACRES_LLAMA_BENCH_CALLS:-8}"
ctx=4096

paths="$(tools/llama_server.sh)"
LLAMA_SERVER="$(sed -n 's/^LLAMA_SERVER=//p' <<<"$paths")"
LLAMA_MODEL="$(sed -n 's/^LLAMA_MODEL=//p' <<<"$paths")"

rm -rf "$out"
mkdir -p "$out"
port=18093
cat >"$out/smollm2.toml" <<EOF
provider = "openai"
model = "smollm2-135m-instruct"
base_url = "http://127.0.0.1:$port/v1"
max_output_tokens = 96
context_tokens = $ctx
[capabilities]
tools = "constrained"
EOF
cat >"$out/sweep.toml" <<EOF
scenarios = ["$root/scenarios"]
models = ["$out/smollm2.toml"]
modes = ["text", "checked"]
repeats = 1
seed = 1
workers = 1
record = "none"
[limits]
calls_per_run = $calls
call_s = 60.0
wake_s = 240.0
EOF

export LLAMA_SERVER LLAMA_MODEL harness out port ctx
t0=$(date +%s)
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -n sh -c 'set -e; ip link set lo up
  "$LLAMA_SERVER" -m "$LLAMA_MODEL" --host 127.0.0.1 --port "$port" -c "$ctx" -t 2 -np 1 \
    --seed 42 --temp 0 --top-k 1 --jinja >"$out/llama-server.log" 2>&1 &
  pid=$!
  trap "kill $pid" EXIT
  i=0; until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
    i=$((i+1)); [ $i -lt 600 ] || { echo "llama-server did not start" >&2; exit 3; }; sleep 0.2; done
  "$harness" sweep "$out/sweep.toml" --out "$out/sweep" || true'
echo "llama_bench.sh: the sweep took $(( $(date +%s) - t0 )) s"
"$harness" leaderboard "$out/sweep" --markdown || true

# The harness's overhead per call: each model_reply's latency (the client's round trip) and each
# run's wall time per call, against the server's own prompt + generation time for the request.
python3 - "$out" <<'EOF'
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
log = (out / "llama-server.log").read_text(errors="replace")
prompt = [float(m) for m in re.findall(r"prompt eval time =\s*([0-9.]+) ms", log)]
gen = [float(m) for m in re.findall(r"(?<!prompt)\s+eval time =\s*([0-9.]+) ms", log)]
# The sweep makes one run at a time in the spec's order (text, then checked; the scenarios
# sorted), so the server's timed requests are the replies in that order (a refused picture
# request gets neither timings nor a reply).
order = []
for mode in ("text", "checked"):
    for f in sorted(out.glob(f"sweep/*/{mode}/*/*/*/*/run.jsonl")):
        rows = [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
        lat = [r["latency_s"] for r in rows if r.get("type") == "model_reply"]
        walls = [r["wall"] for r in rows if "wall" in r]
        # A call cut at its limit waited that long for no reply: the model's time, not the harness's.
        cut = sum(r["latency_s"] for r in rows if r.get("type") == "model_error")
        order.append((mode, lat, (max(walls) - min(walls) if walls else 0.0) - cut))
replies = sum(len(l) for _, l, _ in order)
print(f"runs {len(order)}, model replies {replies}, server requests timed {len(prompt)}")
if replies != len(prompt):
    print("the replies and the timed requests differ in number: no figures per call")
    sys.exit(0)
start = 0
for mode in ("text", "checked", "all"):
    runs = [(l, w) for m, l, w in order if mode in (m, "all")]
    n = sum(len(l) for l, _ in runs)
    lo = 0 if mode == "all" else start
    if mode != "all":
        start += n
    if n == 0:
        continue
    p_ms, g_ms = sum(prompt[lo:lo + n]) / n, sum(gen[lo:lo + n]) / n
    lat_ms = 1000 * sum(sum(l) for l, _ in runs) / n
    wall_ms = 1000 * sum(w for _, w in runs) / n
    print(f"{mode}: {len(runs)} runs, {n} calls; per call: server {p_ms + g_ms:.0f} ms "
          f"(prompt {p_ms:.0f}, generation {g_ms:.0f}); client round trip {lat_ms:.0f} ms "
          f"(+{lat_ms - p_ms - g_ms:.1f} over the server); run wall less cut calls {wall_ms:.0f} ms "
          f"(the harness's own {wall_ms - lat_ms:.0f} ms)")
EOF
