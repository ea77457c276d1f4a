#!/usr/bin/env bash
# GPU tier: the CUDA grader end to end on a real NVIDIA GPU. Every fixture of
# tests/data/grade_cuda gets its final verdict (expected.txt, third column);
# each starter task's CUDA solution grades ok with speedup CIs against the
# native eager and compiled baselines (which the grader itself verifies).
# SKIP where there is no GPU or no CUDA runner.
set -u
. tests/gpu/lib/need_gpu.sh grade_cuda
tmp=${KA_GPU_OUT:-$(mktemp -d)}
mkdir -p "$tmp"
field() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }

grep -v '^#' tests/data/grade_cuda/expected.txt | while read -r file task want rec; do
	[ -n "$file" ] || continue
	name=${file%.cu}
	out="$tmp/fx-$name.json"
	"$KA" grade --target cuda --task "bank/public/$task" --kernel "tests/data/grade_cuda/$file" \
		--no-timing --workdir "$tmp/work" --json "$out" >"$tmp/fx-$name.log" 2>&1
	rc=$?
	got=$(field "$out" 'r["verdict"]')
	if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
		echo "PASS grade_cuda/$name ($want)"
	else
		echo "FAIL grade_cuda/$name: want $want, got '${got:-none}' (exit $rc): $(tail -c 600 "$tmp/fx-$name.log" | tr '\n' ' ')"
	fi
done

# The runner's evidence, not only the verdict: half_output leaves the one
# element of the first check shape (R=1,C=1) unwritten, at index 0.
detail=$(field "$tmp/fx-half_output.json" 'r["detail"]')
case "$detail" in
*"1 of 1 elements never written (first at index 0)"*) echo "PASS grade_cuda/half_output_evidence" ;;
*) echo "FAIL grade_cuda/half_output_evidence: detail '$detail'" ;;
esac

# The starter tasks' solutions (every task's: KA_TEST_BANK=all, or
# tools/bank_gpu.sh, which also writes the calibration table).
. tests/e2e/lib/bank_tasks.sh
for tdir in $(bank_tasks); do
	sol=$tdir/solutions/cuda.cu
	name=$(basename "$tdir")
	out="$tmp/sol-$name.json"
	"$KA" grade --target cuda --task "$tdir" --kernel "$sol" --max-seconds 20 \
		--workdir "$tmp/work" --json "$out" >"$tmp/sol-$name.log" 2>&1
	rc=$?
	line=$(field "$out" '"%s %s %s %s %s" % (r["verdict"], r["speedup_eager"] and round(r["speedup_eager"]["median"],3), r["speedup_compiled"] and round(r["speedup_compiled"]["median"],3), r["time_us"] and round(r["time_us"]["median"],2), r["cupti_host_openings"])')
	set -- $line
	# Every verified call's window opened at the runner's marker (on the
	# GPU's clock), none at the host's timestamp.
	if [ "$rc" -eq 0 ] && [ "${1:-}" = ok ] && [ "${2:-None}" != None ] && [ "${3:-None}" != None ] && [ "${5:-}" = 0 ]; then
		echo "PASS grade_cuda/solution_$name (time ${4} us, vs eager ${2}x, vs compiled ${3}x)"
	else
		echo "FAIL grade_cuda/solution_$name: $line (exit $rc): $(tail -c 600 "$tmp/sol-$name.log" | tr '\n' ' ')"
	fi
done
