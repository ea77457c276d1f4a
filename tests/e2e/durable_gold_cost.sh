#!/usr/bin/env bash
# The gold's cost decides what the parent computes (issue 12, item 5's parent
# side): tasks whose work items are each a lot of work grade in seconds on
# PoCL and never fail the grader.
#  - heavy_item: 4096 outputs, each 4 M additions in the reference (a GEMM
#    row's worth): checked in full that is minutes of gold a call; now a
#    correct candidate grades ok within seconds, and a candidate wrong in one
#    item still gets wrong_answer (the 9-item check shape is cheap: in full);
#  - big_group: work items of 1 M output elements (a group norm with large
#    groups): the sampled check once asked the runner for more than its cap
#    of 1 M indices ("grader failure"); now it grades ok, with timing.
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/ka-run-opencl" ] || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP durable_gold_cost: no OpenCL runner or platform"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=tests/data/gold_cost
verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null; }
check() { # name task kernel want max_seconds extra-args...
	local name=$1 task=$2 kernel=$3 want=$4 max=$5
	shift 5
	local t0 t1 rc got
	t0=$(date +%s)
	"$KA" grade --task "$D/$task" --kernel "$D/$task/$kernel" --workdir "$tmp/w" \
		--json "$tmp/$name.json" "$@" >"$tmp/$name.log" 2>"$tmp/$name.err"
	rc=$?
	t1=$(date +%s)
	got=$(verdict_of "$tmp/$name.json")
	if [ "$rc" -eq 0 ] && [ "$got" = "$want" ] && [ $((t1 - t0)) -le "$max" ]; then
		echo "PASS durable_gold_cost/$name ($((t1 - t0)) s)"
	else
		echo "FAIL durable_gold_cost/$name: exit $rc, verdict '${got:-none}' (want $want), $((t1 - t0)) s (max $max): $(tail -c 300 "$tmp/$name.err" | tr '\n' ' ')"
	fi
}
# (the task's own OpenCL baseline is the reference itself: untimed here)
check heavy_ok heavy_item ok.c ok 60 --no-timing
check heavy_wrong heavy_item wrong.c wrong_answer 60 --no-timing
check big_group big_group ok.c ok 90 --min-samples 5 --max-samples 5

# PoCL's timed shape is the check shape with the most data, not the most
# items: row_dot with a 111-item check shape of 12 KB and an 8-item one of
# 80 KB times the second.
mkdir -p "$tmp/rd"
cp tests/data/tasks_good/row_dot/ref.c "$tmp/rd/"
sed 's/"checks": \[.*\]/"checks": [{"B": 3, "M": 37, "K": 45}, {"B": 1, "M": 8, "K": 4000}]/' \
	tests/data/tasks_good/row_dot/task.json >"$tmp/rd/task.json"
"$KA" grade --task "$tmp/rd" --kernel tests/data/grade_dtypes/row_dot.c --workdir "$tmp/w" \
	--min-samples 5 --max-samples 5 --json "$tmp/rd.json" >"$tmp/rd.log" 2>&1
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["verdict"], d["bench_shape"])' "$tmp/rd.json" 2>/dev/null)
if [ "$got" = "ok B=1,M=8,K=4000" ]; then echo "PASS durable_gold_cost/pocl_shape_by_data"; else
	echo "FAIL durable_gold_cost/pocl_shape_by_data: got '$got': $(tail -c 300 "$tmp/rd.log" | tr '\n' ' ')"
fi

# Paths are escaped where they enter generated source: a task folder whose
# path holds a quote, a backslash and a newline builds its gold (#line in the
# gold wrapper) and its OpenCL reference baseline (#line in bank.c's source).
odd="$tmp/we\"ird\\dir
x"
mkdir -p "$odd"
cp -r tests/data/tasks_good/add_scale "$odd/"
"$KA" grade --task "$odd/add_scale" --kernel tests/data/grade_dtypes/add_scale.c --workdir "$tmp/w" \
	--min-samples 5 --max-samples 5 --json "$tmp/odd.json" >"$tmp/odd.log" 2>&1
got=$(verdict_of "$tmp/odd.json")
if [ "$got" = ok ]; then echo "PASS durable_gold_cost/odd_path"; else
	echo "FAIL durable_gold_cost/odd_path: verdict '${got:-none}': $(tail -c 300 "$tmp/odd.log" | tr '\n' ' ')"
fi
