#!/usr/bin/env bash
# tests/run.sh TIER: run every test of a tier and print one closing line
# "N passed, N failed, N skipped". TIER is quick (no GPU), unit (the quick
# tier's unit binaries only: make san-unit), bank (tests/bank: every task of
# bank/public, make test-bank), train (tests/train: the tracks that train a
# tiny model with torch on the CPU, make test-train) or gpu.
# Each test (a unit binary in $BUILD/tests, or a script in tests/e2e,
# tests/bank, tests/train or tests/gpu) prints lines "PASS name",
# "FAIL name: why" or "SKIP name: why".
#
# Tests run in parallel, KA_TEST_JOBS at a time (default: the number of
# cores, but 1 for the GPU tier, whose tests share one GPU and
# measure time). Each test's output goes to its own log; when it ends, its
# FAIL/SKIP lines and its summary line "# name: ..." are printed in one
# piece, so lines of two tests never interleave. The tests named in ALONE
# run by themselves once the others are done. KA_TEST_TIMEOUT (default 900)
# is the wall-clock limit of one test, KA_TEST_ONLY (a regular expression)
# runs only the tests whose names match it.
set -u
tier=${1:-quick}
BUILD=${BUILD:-build}
export BUILD
export KA="$PWD/$BUILD/ka"
export KA_HOME="$PWD"
log=$(mktemp -d)
declare -A running=() # pid -> test name
cleanup() {
	local pid
	for pid in "${!running[@]}"; do kill -- "$pid" 2>/dev/null; done
	rm -rf "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
pass=0 fail=0 skip=0

# Tests that must not share the machine with another test. None of the quick
# tier's tests write a fixed path or port (each works in its own mktemp -d,
# the fake model server takes port 0, the gold cache writes by rename), so
# the list is empty there; add a test's name here if that changes.
ALONE=()
# Slow tests start first, so that the pool does not end waiting on one of
# them (the slowest first, as the quick tier timed them 2 at a time on the
# 2-core machine on 2026-12-07: 188, 159, 118, 117, 114, 106, 97, 96, 62,
# 51, 46, 44, 41 s; the rest under 40 s; in the train tier track_rsi.sh
# 269 s, track_harness.sh 119 s).
SLOW_FIRST=(test_cudasplit grade_opencl.sh grade_cuda_record.sh harden_files.sh track_frontier.sh
	slurm.sh grade_pipeline.sh durable_run.sh track_procedure.sh track_capability.sh
	test_record_cuda starter_compile.sh task_edges.sh track_rsi.sh track_harness.sh)

case $tier in
quick | unit | bank | train) jobs=${KA_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)} ;;
gpu) jobs=${KA_TEST_JOBS:-1} ;;
*) echo "usage: tests/run.sh quick|unit|bank|train|gpu" >&2; exit 2 ;;
esac
case $jobs in '' | *[!0-9]* | 0) echo "tests/run.sh: KA_TEST_JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac

# The tier's tests: name<TAB>path (a unit binary, or a script run by bash).
list() {
	local t
	if [ "$tier" = bank ] || [ "$tier" = train ]; then
		for t in tests/$tier/*.sh; do
			[ -f "$t" ] && printf '%s\t%s\n' "$(basename "$t")" "$t"
		done
		return
	fi
	if [ "$tier" != gpu ]; then
		for t in "$BUILD"/tests/test_*; do
			[ -x "$t" ] && printf '%s\t%s\n' "$(basename "$t")" "$t"
		done
	fi
	if [ "$tier" = quick ]; then
		for t in tests/e2e/*.sh; do
			[ -f "$t" ] && printf '%s\t%s\n' "$(basename "$t")" "$t"
		done
	elif [ "$tier" = gpu ]; then
		for t in tests/gpu/*.sh; do
			[ -f "$t" ] && printf '%s\t%s\n' "$(basename "$t")" "$t"
		done
	fi
}
in_list() { # name list...
	local n=$1 x; shift
	for x in "$@"; do [ "$x" = "$n" ] && return 0; done
	return 1
}

declare -A path_of=()
order=() alone=()
while IFS=$'\t' read -r name path; do
	[ -n "${KA_TEST_ONLY:-}" ] && ! [[ $name =~ $KA_TEST_ONLY ]] && continue
	path_of[$name]=$path
done < <(list)
for name in "${SLOW_FIRST[@]}"; do
	[ -n "${path_of[$name]:-}" ] && ! in_list "$name" ${ALONE[@]+"${ALONE[@]}"} && order+=("$name")
done
for name in $(printf '%s\n' "${!path_of[@]}" | sort); do
	in_list "$name" "${SLOW_FIRST[@]}" && continue
	if in_list "$name" ${ALONE[@]+"${ALONE[@]}"}; then alone+=("$name"); else order+=("$name"); fi
done

start() { # name: runs it in the background, its output in $log/<name>.log
	local name=$1 f="$log/$1" path=${path_of[$1]}
	local -a cmd=("$path")
	[[ $path == *.sh ]] && cmd=(bash "$path")
	(
		t0=$(date +%s)
		timeout "${KA_TEST_TIMEOUT:-900}" "${cmd[@]}" >"$f.log" 2>&1 </dev/null
		echo "$? $(($(date +%s) - t0))" >"$f.rc.tmp" && mv "$f.rc.tmp" "$f.rc"
	) &
	running[$!]=$name
}

finish() { # name: counts its lines and prints them in one piece
	local name=$1 f="$log/$1" rc secs p f_ s
	read -r rc secs <"$f.rc"
	p=$(grep -c '^PASS ' "$f.log"); f_=$(grep -c '^FAIL ' "$f.log"); s=$(grep -c '^SKIP ' "$f.log")
	if [ "$rc" -ne 0 ] && [ "$f_" -eq 0 ]; then
		if [ "$rc" -eq 124 ]; then
			echo "FAIL $name: ran over ${KA_TEST_TIMEOUT:-900}s" >>"$f.log"
		else
			echo "FAIL $name: exited $rc without a FAIL line" >>"$f.log"
		fi
		f_=1
	fi
	pass=$((pass + p)); fail=$((fail + f_)); skip=$((skip + s))
	{
		grep -E '^(FAIL|SKIP) ' "$f.log"
		if [ "$f_" -gt 0 ]; then
			echo "---- $name output (last 40 lines) ----"; tail -n 40 "$f.log"; echo "----"
		fi
		echo "# $name: $p passed, $f_ failed, $s skipped (${secs}s)"
	} >"$f.report"
	cat "$f.report"
}

reap() { # waits for one test to end, then reports every test that has ended
	local pid
	wait -n 2>/dev/null
	for pid in "${!running[@]}"; do
		if [ -f "$log/${running[$pid]}.rc" ]; then
			wait "$pid" 2>/dev/null
			finish "${running[$pid]}"
			unset "running[$pid]"
		fi
	done
}

run_pool() { # width names...
	local width=$1 name; shift
	for name in "$@"; do
		while [ "${#running[@]}" -ge "$width" ]; do reap; done
		start "$name"
	done
	while [ "${#running[@]}" -gt 0 ]; do reap; done
}

t_all=$(date +%s)
run_pool "$jobs" ${order[@]+"${order[@]}"}
run_pool 1 ${alone[@]+"${alone[@]}"}
echo "# tier $tier: ${#path_of[@]} tests, $jobs at a time, $(($(date +%s) - t_all))s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
