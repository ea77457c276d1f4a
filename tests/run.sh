#!/usr/bin/env bash
# tests/run.sh TIER: run every test of a tier and print one closing line
# "N passed, N failed, N skipped". TIER is quick (no GPU) or gpu.
# Each test (a unit binary in $BUILD/tests, or a script in tests/e2e or
# tests/gpu) prints lines "PASS name", "FAIL name: why" or "SKIP name: why".
set -u
tier=${1:-quick}
BUILD=${BUILD:-build}
export BUILD
export KA="$PWD/$BUILD/ka"
export KA_HOME="$PWD"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
pass=0 fail=0 skip=0

run_one() { # name command...
	local name=$1; shift
	local out="$log/$(echo "$name" | tr '/' '_').log"
	local t0=$(date +%s)
	timeout ${KA_TEST_TIMEOUT:-900} "$@" >"$out" 2>&1
	local rc=$?
	local p f s
	p=$(grep -c '^PASS ' "$out"); f=$(grep -c '^FAIL ' "$out"); s=$(grep -c '^SKIP ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited $rc without a FAIL line" >>"$out"; f=1
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	grep -E '^(FAIL|SKIP) ' "$out"
	if [ "$f" -gt 0 ]; then
		echo "---- $name output (last 40 lines) ----"; tail -n 40 "$out"; echo "----"
	fi
	echo "# $name: $p passed, $f failed, $s skipped ($(( $(date +%s) - t0 ))s)"
}

if [ "$tier" = quick ]; then
	for t in "$BUILD"/tests/test_*; do
		[ -x "$t" ] && run_one "$(basename "$t")" "$t"
	done
	for t in tests/e2e/*.sh; do
		[ -f "$t" ] && run_one "$(basename "$t")" bash "$t"
	done
else
	for t in tests/gpu/*.sh; do
		[ -f "$t" ] && run_one "$(basename "$t")" bash "$t"
	done
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
