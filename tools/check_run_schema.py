#!/usr/bin/env python3
"""Check every row of every run.jsonl below the given folders against the run schema.

The schema is harness/schemas/run_v1.schema.json (the contract acres-harness-run-1, JSON Schema
draft 2020-12). Each row is checked against the branch of its "type", so a failure names the
field. Needs the jsonschema package: pip install jsonschema.

    tools/check_run_schema.py runs/a runs/b/t1_01_one_field__checked__scripted

Exit code: 0 when every row agrees, 1 when a row does not (each failure printed as
file:line: message), 2 for bad usage (no folder, no run.jsonl, no jsonschema).
"""

import argparse
import json
import os
import sys
from pathlib import Path

SCHEMA = Path(__file__).resolve().parent.parent / "harness" / "schemas" / "run_v1.schema.json"


def run_files(folder: Path):
    """Every run.jsonl at or below folder (or folder itself when it is a file), sorted."""
    if folder.is_file():
        return [folder]
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        if "run.jsonl" in files:
            found.append(Path(root) / "run.jsonl")
    return sorted(found)


def validators(schema, jsonschema):
    """One validator for each row type: its branch of oneOf."""
    by_type = {}
    for branch in schema["oneOf"]:
        name = branch["$ref"].rsplit("/", 1)[-1]
        row_type = schema["$defs"][name]["properties"]["type"]["const"]
        # The branch alone, so that an error names the field rather than "not valid under any".
        alone = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": branch["$ref"]}
        by_type[row_type] = jsonschema.Draft202012Validator(alone)
    return by_type


def check_file(path: Path, by_type):
    """The failures of one run.jsonl as 'file:line: message' texts, and the number of rows."""
    failures = []
    rows = 0
    with open(path, "rb") as f:
        for n, raw in enumerate(f, start=1):
            rows += 1
            where = f"{path}:{n}"
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                failures.append(f"{where}: not UTF-8: {e}")
                continue
            if not text.strip():
                failures.append(f"{where}: empty line")
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as e:
                cut = "" if text.endswith("\n") else " (the line is cut off)"
                failures.append(f"{where}: not JSON{cut}: {e}")
                continue
            if not isinstance(row, dict):
                failures.append(f"{where}: not a JSON object")
                continue
            row_type = row.get("type")
            if row_type not in by_type:
                failures.append(f"{where}: unknown row type {row_type!r}")
                continue
            errors = sorted(by_type[row_type].iter_errors(row), key=lambda e: [str(p) for p in e.absolute_path])
            for error in errors:
                at = "/".join(str(p) for p in error.absolute_path) or "(row)"
                failures.append(f"{where}: {row_type} {at}: {error.message}")
    return failures, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="run folders or folders of run folders")
    parser.add_argument("--schema", type=Path, default=SCHEMA, help="the schema file (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        import jsonschema
    except ImportError:
        print("check_run_schema: needs the jsonschema package (pip install jsonschema)", file=sys.stderr)
        return 2
    try:
        schema = json.loads(args.schema.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        print(f"check_run_schema: bad schema {args.schema}: {e}", file=sys.stderr)
        return 2
    by_type = validators(schema, jsonschema)
    files = []
    for folder in args.folders:
        if not folder.exists():
            print(f"check_run_schema: {folder}: no such folder", file=sys.stderr)
            return 2
        found = run_files(folder)
        if not found:
            print(f"check_run_schema: {folder}: no run.jsonl below", file=sys.stderr)
            return 2
        files.extend(found)
    failures = []
    rows = 0
    for path in files:
        file_failures, file_rows = check_file(path, by_type)
        failures.extend(file_failures)
        rows += file_rows
    for failure in failures:
        print(failure)
    verdict = f"{len(failures)} failure(s)" if failures else "ok"
    print(f"check_run_schema: {rows} rows in {len(files)} file(s): {verdict}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
