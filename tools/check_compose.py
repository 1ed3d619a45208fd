"""Validates docker/compose.yaml against the Compose specification's JSON Schema.

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
    path = ROOT / "docker/compose.yaml"
    doc = yaml.safe_load(path.read_text())
    schema = schema_of(argv[1])
    # The schema says draft 2019-09 (with a "#" jsonschema does not know the URI by).
    validator = jsonschema.Draft201909Validator(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors:
        where = ".".join(str(p) for p in e.absolute_path) or "(top)"
        print(f"docker/compose.yaml: {where}: {e.message}", file=sys.stderr)
    for p in problems(doc):
        print(f"docker/compose.yaml: {p}", file=sys.stderr)
    if errors or problems(doc):
        return 1
    print("docker/compose.yaml: ok (compose-spec schema)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
