#!/usr/bin/env python3
"""Check every map in scenarios/maps/ against ros_pkgs/acres_farm/schemas/map.schema.json (jsonschema).

Exit code: 0 when every map agrees, 1 when one does not (printed), 2 without jsonschema.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

try:
    import jsonschema
except ImportError:
    print("check_map_schema: the jsonschema package is missing (pip install jsonschema)", file=sys.stderr)
    sys.exit(2)

schema = json.loads((ROOT / "ros_pkgs/acres_farm/schemas/map.schema.json").read_text())
validator = jsonschema.Draft202012Validator(schema)
bad = 0
maps = sorted((ROOT / "scenarios/maps").glob("*.json"))
for path in maps:
    for err in validator.iter_errors(json.loads(path.read_text())):
        where = "/".join(str(p) for p in err.absolute_path) or "$"
        print(f"{path.relative_to(ROOT)}: at {where}: {err.message}")
        bad += 1
print(f"{len(maps)} maps checked, {bad} problems")
sys.exit(1 if bad else 0)
