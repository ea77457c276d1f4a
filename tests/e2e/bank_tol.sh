#!/usr/bin/env bash
# bank_tol.sh: `ka bank calibrate-tolerance` (the variant table with literal
# figures, --write and its sidecar, the grader variant on PoCL) and the
# tolerance check of `ka bank validate` (a table of sidecars and tolerances
# with the verdict each must get).
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
export KA_HOME=${KA_HOME:-$PWD}
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$tmp/bank
mkdir -p "$b/L1" "$b/L2"
cp -r tests/data/tasks_good/add_scale "$b/L1/"
cp -r tests/data/tasks_good/row_dot "$b/L2/"

# 1. The table: inputs are a fixed function of the task, so are the figures.
"$KA" bank calibrate-tolerance --bank "$b" --no-grader add_scale >"$tmp/out" 2>&1
rc=$?
ok=1
while IFS= read -r want; do
	grep -qxF "$want" "$tmp/out" || { ok=0; echo "missing: $want" >>"$tmp/miss"; }
done <<'TABLE'
tolerance of add_scale: atol 1e-06, rtol 1e-06; errors in rtol units at that atol, over 3 shapes
fp32_out         correct  0          within atol everywhere
fp32_acc         info     0          within atol everywhere
opencl_solution  correct  -          skipped: grader not asked for (--no-grader)
bf16_inputs      wrong    1.27       z[7696103] at N=16777216
fp16_inputs      wrong    0.167      z[7275256] at N=16777216
tf32_inputs      wrong    0.167      z[7275256] at N=16777216
correct_max 0, wrong_min 0.167: rtol 1e-06 is at least 10x above the first and 10x below the second
TABLE
if [ $rc -eq 0 ] && [ $ok = 1 ] && [ ! -e "$b/L1/add_scale/tolerance.json" ]; then
	pass bank_tol_table
else
	fail bank_tol_table "exit $rc: $(cat "$tmp/miss" 2>/dev/null | tr '\n' '|') got $(tr '\n' '|' <"$tmp/out")"
fi

# 2. No wrong variant applies to bf16/int32 inputs; fp32_acc not to fp64 outputs.
"$KA" bank calibrate-tolerance --bank "$b" --no-grader row_dot >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] &&
	grep -qxF 'bf16_inputs      wrong    -          skipped: not applicable: no input that this rounding changes' "$tmp/out" &&
	grep -qxF 'fp32_acc         info     -          skipped: not applicable: an fp64 output needs fp64 arithmetic' "$tmp/out" &&
	grep -qxF 'correct_max 0, wrong_min inf: rtol 1e-09 is at least 10x above the first and 10x below the second' "$tmp/out"; then
	pass bank_tol_not_applicable
else
	fail bank_tol_not_applicable "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

# 3. --write stores the sidecar.
"$KA" bank calibrate-tolerance --bank "$b" --no-grader --write add_scale >"$tmp/out" 2>&1
rc=$?
side=$b/L1/add_scale/tolerance.json
if [ $rc -eq 0 ] && grep -qxF "wrote $b/L1/add_scale/tolerance.json" "$tmp/out" &&
	grep -q '"schema": "ka-tolerance/1"' "$side" && grep -q '"correct_max": 0.0,' "$side" &&
	grep -q '"wrong_min": 0.16' "$side" && grep -q '"atol": 1e-6,' "$side" && grep -q '"where": "",' "$side" &&
	grep -q '"bf16_inputs": {' "$side"; then
	pass bank_tol_write
else
	fail bank_tol_write "exit $rc: $(tr '\n' '|' <"$tmp/out") $(head -c 600 "$side" | tr '\n' ' ')"
fi
cp "$side" "$tmp/side.json"

# 4. validate with the sidecar: each row edits the task or the sidecar, then
# expects an exit code and a message. Rows run on fresh copies. (wrong_zero:
# a wrong variant within atol everywhere passes any rtol, even 0.)
while IFS='|' read -r name edit want_rc want; do
	rm -rf "$b/L1/add_scale"
	cp -r tests/data/tasks_good/add_scale "$b/L1/"
	cp "$tmp/side.json" "$side"
	(cd "$b/L1/add_scale" && eval "$edit")
	"$KA" bank validate --no-cuda --no-opencl --bank "$b" add_scale >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq "$want_rc" ] && grep -qF "$want" "$tmp/out"; then
		pass "bank_tol_validate_$name"
	else
		fail "bank_tol_validate_$name" "exit $rc (want $want_rc): $(tr '\n' '|' <"$tmp/out")"
	fi
done <<'TABLE'
calibrated|true|0|; tolerance: rtol 1e-06 in [10 x 0, 0.167 / 10]
no_sidecar|rm tolerance.json|0|each input changes the output (x, y); no tolerance.json
too_loose|sed -i 's/"rtol": 1e-6/"rtol": 0.05/' task.json|1|tolerance: rtol 0.05 is not 10x below wrong_min 0.167 (a tf32/bf16/fp16 variant would come within 10x of passing; see tolerance.json)
too_tight|sed -i 's/"correct_max": 0.0/"correct_max": 2e-7/' tolerance.json|1|tolerance: rtol 1e-06 is not 10x above correct_max 2e-07 (a correct variant would come within a tenth of failing; see tolerance.json)
atol_changed|sed -i 's/"atol": 1e-6/"atol": 1e-7/' task.json|2|measured at atol 1e-06, the task has atol 1e-07 (run 'ka bank calibrate-tolerance add_scale --write')
broken|echo '{}' >tolerance.json|2|tolerance.json: not a ka-tolerance/1 record (correct_max, wrong_min, atol)
wrong_zero|sed -i 's/"rtol": 1e-6/"rtol": 0/' task.json && sed -i 's/"wrong_min": [0-9.e-]*/"wrong_min": 0.0/' tolerance.json|1|tolerance: rtol 0 is not 10x below wrong_min 0 (a tf32/bf16/fp16 variant would come within 10x of passing; see tolerance.json)
TABLE

# 5. The grader variant: the public starter's OpenCL solution on PoCL.
if [ ! -x "$BUILD/ka-run-opencl" ]; then
	echo "SKIP bank_tol_grader: no $BUILD/ka-run-opencl (no OpenCL here)"
else
	"$KA" bank calibrate-tolerance gelu_bias_scale >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -qE '^opencl_solution  correct  <=[0-9.e+-]+ +grader \(PoCL\), upper bound$' "$tmp/out" &&
		grep -qE '^correct_max .* is at least 10x above the first and 10x below the second$' "$tmp/out"; then
		pass bank_tol_grader
	elif grep -q 'skipped: no OpenCL device' "$tmp/out"; then
		echo "SKIP bank_tol_grader: no OpenCL device ($(grep opencl_solution "$tmp/out"))"
	else
		fail bank_tol_grader "exit $rc: $(tr '\n' '|' <"$tmp/out")"
	fi
fi
