#!/usr/bin/env bash
# bank_grade.sh: `ka bank validate --grade` on PoCL (src/bank_grade.c):
#  - two bank tasks validate, their OpenCL solutions grade ok with the full
#    protocol, the table has a row each with the solution's and eager.cu's
#    times, and --json holds one grade result a task (exit 0);
#  - with a calibration of this device beside a copy of the bank, the row's
#    eager.cu / torch eager is eager.cu's median over the calibration's, a
#    record of another PyTorch form is "stale", a task with no record "-";
#  - a copy of a task whose solution is wrong: its row says wrong_answer and
#    the command exits 1; --grade with another action, a bad --target and
#    --json without --grade are usage errors (exit 2).
# SKIP where there is no OpenCL runner or platform.
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
export KA_HOME=${KA_HOME:-$PWD}
if [ ! -x "$BUILD/ka-run-opencl" ] || ! command -v clinfo >/dev/null || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP bank_grade: no OpenCL runner or platform on this machine"
	exit 0
fi
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
G=(--grade --target opencl --no-cuda --max-seconds 1 --workdir "$tmp/w")

"$KA" bank validate "${G[@]}" --json "$tmp/g.jsonl" silu_scale row_sum >"$tmp/out" 2>&1
rc=$?
rows=$(grep -cE '^\| (silu_scale|row_sum) \| ok \| [0-9.]+ \| [0-9.]+ \| ' "$tmp/out")
lines=$(wc -l <"$tmp/g.jsonl" 2>/dev/null || echo 0)
if [ $rc -eq 0 ] && [ "$rows" = 2 ] && [ "$lines" = 2 ] &&
	grep -q '^2 of 2 solutions ok' "$tmp/out" && grep -q 'no calibration of this device' "$tmp/out"; then
	pass bank_grade_ok
else
	fail bank_grade_ok "exit $rc, $rows rows, $lines JSON lines: $(tr '\n' '|' <"$tmp/out")"
fi

# A bank copy (its public/ tier folders, lib/ linked) with a calibration of
# this device: silu_scale's record of its own form, row_sum's of another.
mkdir -p "$tmp/bank/public/L1" "$tmp/bank/calibration"
ln -s "$PWD/bank/lib" "$tmp/bank/lib"
cp -r bank/public/L1/silu_scale bank/public/L1/row_sum "$tmp/bank/public/L1/"
python3 - "$tmp/g.jsonl" "$tmp/bank/calibration" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
gpu = rows[0]["device"]["name"]
torch = {r["task"]: json.load(open(os.path.join(r["task_dir"], "task.json")))["torch"] for r in rows}
tasks = {"silu_scale": {"torch": torch["silu_scale"], "eager": {"median_us": 100.0}, "compiled": {"median_us": 50.0}},
         "row_sum": {"torch": "x.sum(-1) * 2", "eager": {"median_us": 100.0}, "compiled": {"median_us": 50.0}}}
name = gpu.replace(" ", "_").replace("/", "_")
json.dump({"format": "ka-calibration/1", "gpu": gpu, "tasks": tasks}, open(os.path.join(sys.argv[2], name + ".json"), "w"))
PY
"$KA" bank validate "${G[@]}" --bank "$tmp/bank/public" --json "$tmp/c.jsonl" silu_scale row_sum >"$tmp/out" 2>&1
rc=$?
want=$(python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][0]
print("%.2f" % (r["eager_us"]["median"] / 100.0))' "$tmp/c.jsonl" 2>/dev/null)
if [ $rc -eq 0 ] && [ -n "$want" ] &&
	grep -qE "^\| silu_scale \| ok \| .* \| $want \| - \|\$" "$tmp/out" &&
	grep -qE '^\| row_sum \| ok \| .* \| stale \| stale \|$' "$tmp/out"; then
	pass bank_grade_calibration
else
	fail bank_grade_calibration "exit $rc, want eager ratio $want: $(tr '\n' '|' <"$tmp/out")"
fi

# A wrong solution: the row says so, exit 1.
cp -r bank/public/L1/silu_scale "$tmp/bank/public/L1/silu_wrong"
sed -i 's/"name": "silu_scale"/"name": "silu_wrong"/' "$tmp/bank/public/L1/silu_wrong/task.json"
python3 - "$tmp/bank/public/L1/silu_wrong/solutions/opencl.c" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
# The kernel's first store gets 1 added: wrong everywhere, still compiles.
s2, n = re.subn(r"(\w+\[[^\]]+\]\s*=\s*)([^;]+);", r"\1(\2) + 1.0f;", s, count=1)
assert n == 1, "no store to break"
open(p, "w").write(s2)
PY
"$KA" bank validate "${G[@]}" --bank "$tmp/bank/public" silu_wrong >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -qE '^\| silu_wrong \| wrong_answer' "$tmp/out" && grep -q '^0 of 1 solutions ok' "$tmp/out"; then
	pass bank_grade_wrong
else
	fail bank_grade_wrong "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

ok=1
for args in "list --grade" "validate --grade --target metal" "validate --json $tmp/x.jsonl"; do
	# shellcheck disable=SC2086
	"$KA" bank $args silu_scale >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -ne 2 ] || [ "$(wc -l <"$tmp/out")" != 1 ]; then
		ok=0
		echo "  ka bank $args: exit $rc: $(cat "$tmp/out")"
	fi
done
if [ $ok = 1 ]; then pass bank_grade_usage; else fail bank_grade_usage "see above"; fi
