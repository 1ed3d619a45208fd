#!/usr/bin/env python3
"""Check that the scenario JSON Schema agrees with the shipped scenarios and the broken corpus.

The schema is harness/schemas/scenario.schema.json (the format acres-harness-scenario-1, JSON
Schema draft 2020-12). The script checks, from the repository root of this file:

  * the schema itself is a valid draft 2020-12 schema;
  * every shipped scenario scenarios/t*.json and scenarios/safety/*.json is valid;
  * every broken file of harness/tests/corpus/scenarios/ agrees with its level in levels.txt there:
      syntax    the file is not JSON,
      schema    the file is JSON and the schema refuses it,
      semantic  the schema accepts it (only the loader, which knows the map, refuses it);
  * levels.txt lists every corpus file, and only those.

Needs the jsonschema package: pip install jsonschema.

    tools/check_scenario_schema.py [--verbose]

Exit code: 0 when everything agrees, 1 on any disagreement (each printed on its own line),
2 for bad usage (jsonschema missing, a file of the layout missing).
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "harness" / "schemas" / "scenario.schema.json"
SHIPPED = ROOT / "scenarios"
CORPUS = ROOT / "harness" / "tests" / "corpus" / "scenarios"
LEVELS = CORPUS / "levels.txt"
KNOWN_LEVELS = ("syntax", "schema", "semantic")


def rel(path: Path) -> str:
    """A path relative to the repository root, for messages."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def first_error(validator, doc):
    """The most relevant schema error of doc as 'path: message', or None when doc is valid."""
    import jsonschema

    err = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if err is None:
        return None
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path).lstrip(".")
    return f"at {path or '$'}: {err.message}"


def read_levels():
    """levels.txt as an ordered list of (file name, level); problems go to the returned list."""
    levels, problems = [], []
    for n, line in enumerate(LEVELS.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or parts[1] not in KNOWN_LEVELS:
            problems.append(f"{rel(LEVELS)}:{n}: expected '<file> <{'|'.join(KNOWN_LEVELS)}>', found {line!r}")
            continue
        levels.append((parts[0], parts[1]))
    return levels, problems


def check_shipped(validator, verbose):
    """Every shipped scenario must be valid."""
    problems = []
    files = sorted(SHIPPED.glob("t*.json")) + sorted((SHIPPED / "safety").glob("*.json"))
    if not files:
        problems.append(f"{rel(SHIPPED)}: no shipped scenario t*.json")
    for path in files:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            problems.append(f"{rel(path)}: shipped scenario is not JSON: {e}")
            continue
        err = first_error(validator, doc)
        if err is not None:
            problems.append(f"{rel(path)}: shipped scenario refused by the schema: {err}")
        elif verbose:
            print(f"ok   {rel(path)}: valid")
    return problems, len(files)


def check_corpus(validator, verbose):
    """Every corpus file must agree with its level."""
    levels, problems = read_levels()
    on_disk = sorted(p.name for p in CORPUS.glob("*.json"))
    listed = [name for name, _ in levels]
    for name in sorted(set(on_disk) - set(listed)):
        problems.append(f"{rel(CORPUS / name)}: not listed in {rel(LEVELS)}")
    for name in sorted(set(listed) - set(on_disk)):
        problems.append(f"{rel(LEVELS)}: lists {name}, which does not exist")
    if len(listed) != len(set(listed)):
        problems.append(f"{rel(LEVELS)}: a file is listed twice")
    for name, level in levels:
        path = CORPUS / name
        if not path.exists():
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            if level != "syntax":
                problems.append(f"{rel(path)}: level {level}, but the file is not JSON: {e}")
            elif verbose:
                print(f"ok   {rel(path)}: syntax: not JSON ({e})")
            continue
        if level == "syntax":
            problems.append(f"{rel(path)}: level syntax, but the file is JSON")
            continue
        err = first_error(validator, doc)
        if level == "schema" and err is None:
            problems.append(f"{rel(path)}: level schema, but the schema accepts it")
        elif level == "semantic" and err is not None:
            problems.append(f"{rel(path)}: level semantic, but the schema refuses it ({err}); mark it schema")
        elif verbose:
            print(f"ok   {rel(path)}: {level}" + (f": {err}" if err else ": accepted by the schema"))
    return problems, len(levels)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="print each file that agrees too")
    args = parser.parse_args()
    try:
        import jsonschema
    except ImportError:
        print("error: the jsonschema package is missing: pip install jsonschema", file=sys.stderr)
        return 2
    for path in (SCHEMA, SHIPPED, CORPUS, LEVELS):
        if not path.exists():
            print(f"error: {rel(path)} does not exist", file=sys.stderr)
            return 2
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        print(f"{rel(SCHEMA)}: not a valid draft 2020-12 schema: {e.message}")
        return 1
    validator = jsonschema.Draft202012Validator(schema)
    shipped_problems, n_shipped = check_shipped(validator, args.verbose)
    corpus_problems, n_corpus = check_corpus(validator, args.verbose)
    problems = shipped_problems + corpus_problems
    for p in problems:
        print(p)
    if problems:
        print(f"FAILED: {len(problems)} disagreement(s) between {rel(SCHEMA)} and the scenarios")
        return 1
    print(f"ok: {n_shipped} shipped scenarios valid, {n_corpus} corpus files agree with their levels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
