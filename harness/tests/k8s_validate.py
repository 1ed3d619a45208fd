"""Validates a Kubernetes manifest (YAML or JSON documents separated by ---) against the
Kubernetes API models of the official Python client (the `kubernetes` package): every key must
be a field of its model (unknown keys are errors, which the client itself would ignore), every
value of the field's type, and every required field present (the client's own checks, run by
deserializing each document into its model). Prints "N documents valid" or the problems and
exits 1.

Usage: python3 k8s_validate.py MANIFEST
"""

import sys

import yaml
from kubernetes import client

SCALARS = {"str": str, "int": int, "bool": bool, "float": (int, float)}


def model_name(doc):
    group_version = doc.get("apiVersion", "")
    version = group_version.split("/")[-1]
    return version[0].upper() + version[1:] + doc.get("kind", "")


def check(value, type_name, path, problems):
    if value is None:
        return
    # The client writes list[T] / dict(str, T) or, lately, List[T] / Dict[str, T].
    if type_name.lower().startswith("list["):
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list")
            return
        for i, item in enumerate(value):
            check(item, type_name[5:-1], f"{path}[{i}]", problems)
    elif type_name.lower().startswith(("dict(", "dict[")):
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a map")
            return
        inner = type_name[5:-1].split(",", 1)[1].strip()
        for key, item in value.items():
            check(item, inner, f"{path}.{key}", problems)
    elif type_name in SCALARS:
        ok = isinstance(value, SCALARS[type_name]) and not (type_name != "bool" and isinstance(value, bool))
        if not ok:
            problems.append(f"{path}: {value!r} is not {type_name}")
    elif type_name in ("object", "datetime", "date"):
        return
    else:
        cls = getattr(client.models, type_name, None)
        if cls is None:
            problems.append(f"{path}: no model {type_name}")
            return
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a {type_name} object")
            return
        by_key = {key: attr for attr, key in cls.attribute_map.items()}
        for key, item in value.items():
            attr = by_key.get(key)
            if attr is None:
                problems.append(f"{path}.{key}: not a field of {type_name}")
                continue
            check(item, cls.openapi_types[attr], f"{path}.{key}", problems)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    api = client.ApiClient()
    problems = []
    for i, doc in enumerate(docs):
        name = model_name(doc)
        if getattr(client.models, name, None) is None:
            problems.append(f"document {i}: no model for {doc.get('apiVersion')} {doc.get('kind')}")
            continue
        check(doc, name, f"document {i} ({doc.get('kind')})", problems)
        try:
            # The client's own required-field and enum checks.
            api._ApiClient__deserialize(doc, name)
        except (ValueError, TypeError) as e:
            problems.append(f"document {i}: {e}")
    if not docs:
        problems.append("no document")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{len(docs)} documents valid")


if __name__ == "__main__":
    main()
