#!/usr/bin/env bash
# The whole test suite, from a fresh checkout: installs what the tests need (Python packages
# from PyPI), then checks formatting and lints, runs every Rust test (unit, property, the world
# and skill server, the planner loop, the binary end to end), and checks the JSON Schemas.
set -euo pipefail
cd "$(dirname "$0")/.."

export ACRES_REQUIRE_PYTHON=1
echo "== installing the Python test packages"
python3 -m pip install --quiet --disable-pip-version-check -r tools/requirements-test.txt

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy (-D warnings)"
cargo clippy --workspace --all-targets --quiet -- -D warnings

echo "== cargo test"
cargo test --workspace

echo "== JSON Schema of the scenarios"
python3 tools/check_scenario_schema.py
echo "== JSON Schema of the maps"
python3 tools/check_map_schema.py
