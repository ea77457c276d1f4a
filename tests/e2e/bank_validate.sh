#!/usr/bin/env bash
# bank_validate.sh: `ka bank list|show|validate` on the fixture banks.
# tests/data/tasks_good validates (exit 0); each tests/data/tasks_bad/<case>
# gives the exit code and the one-line message in its 'expected' file
# (2: does not load or compile; 1: degenerate).
set -u
KA=${KA:-build/ka}
export KA_HOME=${KA_HOME:-$PWD}
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The good bank passes, by --bank and as a positional folder.
"$KA" bank validate --bank tests/data/tasks_good >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^validated 2 tasks: 2 passed, 0 failed' "$tmp/out" &&
	grep -q '^ok   tests/data/tasks_good/add_scale (L1 add_scale): schema; C; ' "$tmp/out" &&
	grep -q '^ok   tests/data/tasks_good/row_dot (L2 row_dot): schema; C; ' "$tmp/out" &&
	grep -q 'gold on 2 check shapes (119 items): finite, not constant; each input changes the output (x, w)' "$tmp/out"; then
	pass bank_validate_good
else
	fail bank_validate_good "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi
"$KA" bank validate tests/data/tasks_good/row_dot >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^validated 1 task: 1 passed' "$tmp/out"; then
	pass bank_validate_positional
else
	fail bank_validate_positional "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

# An index input whose range is an expression ("hi": "V - 1"): validates
# (gold at every check shape, so every drawn index is in range), and show
# prints the bound as written.
"$KA" bank validate --no-cuda --no-opencl tests/data/tasks_index/gather_rows >"$tmp/out" 2>&1
rc=$?
"$KA" bank show --bank tests/data/tasks_index gather_rows >"$tmp/show" 2>&1
if [ $rc -eq 0 ] && grep -q '^validated 1 task: 1 passed' "$tmp/out" &&
	grep -q 'each input changes the output (idx, w)' "$tmp/out" &&
	grep -q '^  idx        int64 \[N\]  int\[0, V - 1\]$' "$tmp/show"; then
	pass bank_validate_index_range
else
	fail bank_validate_index_range "exit $rc: $(tr '\n' '|' <"$tmp/out") $(grep idx "$tmp/show")"
fi

# Each bad fixture: its exit code and its message line.
for d in tests/data/tasks_bad/*/; do
	d=${d%/}
	case_name=$(basename "$d")
	want_rc=$(sed -n 1p "$d/expected")
	want_msg=$(sed -n 2p "$d/expected")
	"$KA" bank validate "$d" >"$tmp/out" 2>&1
	rc=$?
	if [ "$want_rc" = 2 ]; then prefix="bad "; else prefix="FAIL"; fi
	if [ $rc -eq "$want_rc" ] && grep -qxF "$prefix $want_msg" "$tmp/out"; then
		pass "bank_validate_bad_$case_name"
	else
		fail "bank_validate_bad_$case_name" "exit $rc (want $want_rc): $(head -1 "$tmp/out")"
	fi
done

# A whole bank with one bad task exits 2 and still reports every task.
mkdir -p "$tmp/bank/L1"
cp -r tests/data/tasks_good/add_scale tests/data/tasks_bad/unknown_dtype tests/data/tasks_bad/degenerate_const "$tmp/bank/L1/"
"$KA" bank validate --no-cuda --no-opencl --bank "$tmp/bank" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q '^validated 3 tasks: 1 passed, 2 failed (1 bad input, 1 degenerate)' "$tmp/out" &&
	grep -q 'OpenCL skipped (no ka-clc); CUDA skipped (no nvcc)' "$tmp/out"; then
	pass bank_validate_mixed
else
	fail bank_validate_mixed "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

# list and show.
"$KA" bank list --bank tests/data/tasks_good >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 2 ] &&
	grep -q '^L1  add_scale  *params N  *bench N=16777216  *tests/data/tasks_good/add_scale$' "$tmp/out" &&
	grep -q '^L2  row_dot  *params B,M,K  *bench B=16,M=1024,K=4096 ' "$tmp/out"; then
	pass bank_list
else
	fail bank_list "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi
"$KA" bank show --bank tests/data/tasks_good row_dot >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^task:        row_dot (L2)$' "$tmp/out" &&
	grep -q '^checks:      B=3,M=37,K=45; B=1,M=8,K=16$' "$tmp/out" &&
	grep -q '^  x          bf16  \[B, M, K\]  normal(mean 0.5, std 2)$' "$tmp/out" &&
	grep -q '^---- ref.c ----$' "$tmp/out" && grep -q 'KA_LD_BF16' "$tmp/out"; then
	pass bank_show
else
	fail bank_show "exit $rc: $(head -5 "$tmp/out" | tr '\n' '|')"
fi

# Usage errors: one line, exit 2; --help exit 0.
check_usage() { # name want_rc want_text args...
	local name=$1 want=$2 text=$3; shift 3
	"$KA" bank "$@" >"$tmp/out" 2>&1
	local rc=$?
	if [ $rc -eq "$want" ] && grep -qF -- "$text" "$tmp/out"; then pass "$name"; else fail "$name" "exit $rc: $(head -2 "$tmp/out" | tr '\n' '|')"; fi
}
check_usage bank_usage_action 2 "ka bank: unknown action 'frob' (list, show or validate)" frob
check_usage bank_usage_flag 2 "ka bank: unknown option '--bogus'" list --bogus
check_usage bank_usage_missing 2 "ka bank: missing action (list, show or validate)"
check_usage bank_usage_nobank 2 "ka bank: /nonexistent-bank: not a bank folder" list --bank /nonexistent-bank
check_usage bank_usage_notask 2 "ka bank: no task 'nope' in tests/data/tasks_good" show --bank tests/data/tasks_good nope
check_usage bank_help 0 "usage: ka bank list|show|validate" --help

# docs/task.schema.json agrees with task_load on the fixtures (where a schema
# can tell): good tasks and the public bank validate, schema-level bad
# fixtures do not.
if python3 -c 'import jsonschema' 2>/dev/null; then
	if python3 - <<'PY' >"$tmp/py" 2>&1; then
import glob, json, jsonschema
v = jsonschema.Draft202012Validator(json.load(open("docs/task.schema.json")))
for f in glob.glob("tests/data/tasks_good/*/task.json") + glob.glob("tests/data/tasks_index/*/task.json") + glob.glob("bank/public/*/*/task.json"):
    errs = list(v.iter_errors(json.load(open(f))))
    assert not errs, (f, errs[0].message)
for case in ("unknown_dtype", "wrong_type", "unknown_field"):
    f = f"tests/data/tasks_bad/{case}/task.json"
    assert list(v.iter_errors(json.load(open(f)))), f + " passes the schema"
PY
		pass bank_schema_agrees
	else
		fail bank_schema_agrees "$(tail -1 "$tmp/py")"
	fi
else
	echo "SKIP bank_schema_agrees: no python3 jsonschema"
fi
