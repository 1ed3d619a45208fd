"""Validates docker/compose.yaml (and docker/compose.ci.yaml, an override) against the Compose specification's JSON Schema.

The schema is the one the `docker-compose` package ships (`compose/config/compose_spec.json`;
PyPI, pinned in tools/test.sh, downloaded without its dependencies): pass the wheel's path.
Besides the schema: the harness service waits for a healthy vehicle service, the token is a
secret of both services, the run folders are on a volume. Exits 1 naming the JSON path of the
problem, 2 on bad input."""

import json
import pathlib
import sys
import zipfile

import jsonschema
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent


def schema_of(wheel):
    with zipfile.ZipFile(wheel) as z:
        return json.loads(z.read("compose/config/compose_spec.json"))


def problems(doc):
    out = []
    services = doc.get("services", {})
    for name in ("vehicle", "harness"):
        if name not in services:
            out.append(f"services.{name}: missing")
            continue
        if "link_token" not in services[name].get("secrets", []):
            out.append(f"services.{name}.secrets: the link token is not a secret of it")
    cond = services.get("harness", {}).get("depends_on", {}).get("vehicle", {}).get("condition")
    if cond != "service_healthy":
        out.append("services.harness.depends_on.vehicle.condition: must be service_healthy")
    if not any(v.startswith("runs:") for v in services.get("harness", {}).get("volumes", [])):
        out.append("services.harness.volumes: the run folders are not on the runs volume")
    return out


def main(argv):
    if len(argv) != 2:
        print("usage: check_compose.py DOCKER_COMPOSE_WHEEL", file=sys.stderr)
        return 2
    schema = schema_of(argv[1])
    # The schema says draft 2019-09 (with a "#" jsonschema does not know the URI by).
    validator = jsonschema.Draft201909Validator(schema)
    failed = False
    # compose.ci.yaml (tools/docker_ci.sh's override) is a partial file: the schema only.
    for name, whole in (("docker/compose.yaml", True), ("docker/compose.ci.yaml", False)):
        doc = yaml.safe_load((ROOT / name).read_text())
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors:
            where = ".".join(str(p) for p in e.absolute_path) or "(top)"
            print(f"{name}: {where}: {e.message}", file=sys.stderr)
        found = problems(doc) if whole else []
        for p in found:
            print(f"{name}: {p}", file=sys.stderr)
        if errors or found:
            failed = True
        else:
            print(f"{name}: ok (compose-spec schema)")
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
