#!/usr/bin/env bash
# bank_new.sh: `ka bank new NAME --tier T` writes a skeleton that validate
# refuses while placeholders (KA_TODO) remain and accepts once they are
# replaced; bad names, tiers and existing folders are usage/input errors.
set -u
KA=${KA:-build/ka}
export KA_HOME=${KA_HOME:-$PWD}
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$tmp/bank
mkdir -p "$b"

"$KA" bank new relu_scale --tier L1 --bank "$b" >"$tmp/out" 2>&1
rc=$?
d=$b/L1/relu_scale
if [ $rc -eq 0 ] && grep -qF "wrote the skeleton of relu_scale in $d. Fill in every KA_TODO:" "$tmp/out" &&
	for f in task.json ref.c eager.cu compiled.cu solutions/cuda.cu solutions/opencl.c; do
		grep -q KA_TODO "$d/$f" || exit 1
	done && grep -q '"name": "relu_scale"' "$d/task.json" && grep -q '"tier": "L1"' "$d/task.json" &&
	grep -q '#include "eager.cuh"' "$d/eager.cu" && grep -q '#include "compiled.cuh"' "$d/compiled.cu"; then
	pass bank_new_files
else
	fail bank_new_files "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

# Untouched: refused, naming the files.
"$KA" bank validate --no-cuda --bank "$b" >"$tmp/out" 2>&1
rc=$?
want="bad  $d: placeholders (KA_TODO) left in task.json, ref.c, eager.cu, compiled.cu, solutions/cuda.cu, solutions/opencl.c: fill in the skeleton (docs/bank.md)"
if [ $rc -eq 2 ] && grep -qxF "$want" "$tmp/out"; then
	pass bank_new_placeholders
else
	fail bank_new_placeholders "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

# Half filled in: only the files left are named.
sed -i 's/KA_TODO:\{0,1\}//' "$d/task.json" "$d/ref.c" "$d/eager.cu" "$d/compiled.cu"
"$KA" bank validate --no-cuda --bank "$b" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -qF "placeholders (KA_TODO) left in solutions/cuda.cu, solutions/opencl.c:" "$tmp/out"; then
	pass bank_new_partial
else
	fail bank_new_partial "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

# Filled in (here: the marks removed, the skeleton's copy kept): validates.
sed -i 's/KA_TODO:\{0,1\}//' "$d/solutions/cuda.cu" "$d/solutions/opencl.c"
"$KA" bank validate --no-cuda --bank "$b" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "^ok   $d (L1 relu_scale): schema; C; " "$tmp/out" &&
	grep -q '^validated 1 task: 1 passed, 0 failed' "$tmp/out"; then
	pass bank_new_filled_validates
else
	fail bank_new_filled_validates "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

# Errors: a table of arguments, exit code and message.
while IFS='|' read -r name args want_rc want; do
	# shellcheck disable=SC2086
	"$KA" bank new $args --bank "$b" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq "$want_rc" ] && grep -qF "$want" "$tmp/out"; then
		pass "bank_new_error_$name"
	else
		fail "bank_new_error_$name" "exit $rc (want $want_rc): $(tr '\n' '|' <"$tmp/out")"
	fi
done <<'TABLE'
exists|relu_scale --tier L1|2|/L1/relu_scale: already exists
bad_name|Relu --tier L1|2|task name 'Relu': expected 1 to 31 of [a-z0-9_]
long_name|abcdefghijabcdefghijabcdefghijab --tier L1|2|expected 1 to 31 of [a-z0-9_]
bad_tier|x1 --tier L4|2|tier 'L4': expected L1, L2 or L3
no_tier|x1|2|new needs --tier L1, L2 or L3
no_name|--tier L1|2|new needs one task name
TABLE
