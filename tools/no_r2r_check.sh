#!/usr/bin/env bash
# Checks that the default build of the workspace never compiles r2r (issue 19): the r2r backend
# of acres_ros is the feature `r2r`, off by default and enabled by no workspace member, so the
# resolved graph of a plain `cargo build`/`cargo test`/`cargo clippy --workspace --all-targets`
# (normal, build and dev dependencies, every target) has no r2r. Fails (exit 1) if it has one.
# (`--all-features` would enable it: the test command never passes it.)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(cargo tree --workspace --target all -e normal,build,dev -i r2r 2>&1 || true)
if grep -q "did not match any packages" <<<"$out"; then
    echo "no_r2r_check: ok, the default build has no r2r"
else
    echo "no_r2r_check: r2r is in the default build (or cargo tree failed):" >&2
    echo "$out" >&2
    exit 1
fi
