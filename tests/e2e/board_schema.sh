#!/usr/bin/env bash
# board_schema.sh: docs/scorecard.schema.json is a valid JSON Schema 2020-12,
# accepts every good fixture, and rejects the structural bad fixtures (the
# consistency ones only `ka scorecard check` can catch). Needs Python's
# jsonschema (tools/setup.sh installs it).
set -u
if ! python3 -c 'import jsonschema' 2>/dev/null; then
	echo "SKIP board_schema: python3 jsonschema is not installed (tools/setup.sh installs it)"
	exit 0
fi
python3 - <<'PY'
import json, glob, jsonschema
s = json.load(open("docs/scorecard.schema.json"))
jsonschema.Draft202012Validator.check_schema(s)
v = jsonschema.Draft202012Validator(s)
def res(name, ok, why=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + why))
for f in sorted(glob.glob("tests/data/scorecards/good/*.json")):
    errs = list(v.iter_errors(json.load(open(f))))
    res("schema_accepts_" + f.split("/")[-1][:-5], not errs, errs[0].message if errs else "")
for f in ["schema_version", "missing_hash", "k_string", "verdict_enum", "ckpt_v1"]:
    d = json.load(open("tests/data/scorecards/bad/%s.json" % f))
    res("schema_rejects_" + f, bool(list(v.iter_errors(d))), "accepted")
PY
