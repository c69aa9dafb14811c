#!/usr/bin/env python3
"""Validates every conformance scenario against Docs/Conformance/scenario.schema.json (JSON Schema 2020-12).

Usage: validate-scenarios.py SCHEMA FOLDER. Needs the `jsonschema` package. Exits non-zero on any invalid
file, and also if the schema accepts a scenario that is deliberately malformed (so a schema that accepts
everything cannot pass).
"""
import glob
import json
import sys

import jsonschema

schema_path, folder = sys.argv[1], sys.argv[2]
with open(schema_path) as handle:
    schema = json.load(handle)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

files = sorted(glob.glob(f"{folder}/**/*.json", recursive=True))
invalid = 0
for path in files:
    with open(path) as handle:
        errors = sorted(validator.iter_errors(json.load(handle)), key=lambda error: list(error.path))
    for error in errors[:3]:
        location = ".".join(str(part) for part in error.path) or "(top)"
        print(f"{path}: {location}: {error.message[:160]}")
    invalid += bool(errors)

malformed = {"name": "x", "description": "y", "rules": ["C-1"], "steps": [{"issueCode": {}, "refresh": {"refreshToken": "t"}}]}
if validator.is_valid(malformed):
    print("the schema accepts a step with two actions")
    invalid += 1

print(f"{len(files)} scenarios checked against the schema, {invalid} invalid")
sys.exit(1 if invalid else 0)
