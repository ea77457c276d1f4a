#!/usr/bin/env bash
# The grader end to end on OpenCL (PoCL here): every hostile fixture in
# tests/data/grade_opencl gets the verdict its table says, and each starter
# task's verified OpenCL solution grades ok and beats the naive baseline with
# a speedup CI. SKIP when there is no OpenCL runner or platform.
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/ka-run-opencl" ] || ! command -v clinfo >/dev/null || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP grade_opencl: no OpenCL runner or platform on this machine"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null; }

# expected.txt: fixture file, task (under bank/public), expected verdict.
while read -r file task want; do
	[ -n "$file" ] || continue
	task=bank/public/$task
	name=${file%.c}
	out="$tmp/$name.json"
	"$KA" grade --task "$task" --target opencl --kernel "tests/data/grade_opencl/$file" \
		--no-timing --workdir "$tmp/work" --json "$out" >"$tmp/$name.log" 2>&1
	rc=$?
	got=$(verdict_of "$out")
	if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
		echo "PASS grade_opencl/$name ($want)"
	else
		echo "FAIL grade_opencl/$name: want $want, got '${got:-none}' (exit $rc): $(tail -c 600 "$tmp/$name.log" | tr '\n' ' ')"
	fi
done < tests/data/grade_opencl/expected.txt

# Starter solutions: ok, timed, faster than the naive per-item baseline.
. tests/e2e/lib/bank_tasks.sh
for sol in $(for t in $(bank_tasks); do echo "$t/solutions/opencl.c"; done); do
	[ -f "$sol" ] || continue
	tdir=$(dirname "$(dirname "$sol")")
	name=$(basename "$tdir")
	out="$tmp/sol-$name.json"
	"$KA" grade --task "$tdir" --target opencl --kernel "$sol" --max-seconds 8 \
		--workdir "$tmp/work" --json "$out" >"$tmp/sol-$name.log" 2>&1
	rc=$?
	line=$(python3 - "$out" <<'PY' 2>/dev/null
import json, sys
r = json.load(open(sys.argv[1]))
s = r.get("speedup_eager") or {}
print(r["verdict"], s.get("median", 0), s.get("lo", 0), s.get("hi", 0), r.get("test_grade"))
PY
)
	set -- $line
	if [ "$rc" -eq 0 ] && [ "${1:-}" = ok ] && python3 -c "import sys; sys.exit(0 if float('${3:-0}') > 1 else 1)"; then
		echo "PASS grade_opencl/solution_$name (speedup ${2}x [${3}, ${4}], test_grade=${5})"
	else
		echo "FAIL grade_opencl/solution_$name: $line (exit $rc): $(tail -c 600 "$tmp/sol-$name.log" | tr '\n' ' ')"
	fi
done
