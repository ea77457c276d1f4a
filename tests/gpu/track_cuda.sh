#!/usr/bin/env bash
# GPU tier: the capability track on CUDA, end to end: the archive model over
# the L1 tier (k = 2), every sample graded ok (2 per L1 task), the scorecard valid, the
# compile-ahead pool used (it built the baselines and the sources while the
# grader worked). SKIP where there is no GPU or no CUDA runner.
set -u
. tests/gpu/lib/need_gpu.sh track_cuda
base=${KA_GPU_OUT:-$(mktemp -d)}
mkdir -p "$base"
tmp=$base/track
rm -rf "$tmp"
n=0
for d in bank/public/L1/*/; do [ -f "$d/task.json" ] && n=$((n + 1)); done
want=$((2 * n))
"$KA" --track capability --api-model archive:bank/public --tier L1 --target cuda --k 2 \
	--out "$tmp" --verbose >"$tmp.out" 2>"$tmp.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "$want of $want samples graded" "$tmp.out"; then
	echo "PASS track_cuda/run"
else
	echo "FAIL track_cuda/run: exit $rc: $(tail -c 600 "$tmp.err" | tr '\n' ' ')"
fi
if "$KA" scorecard check "$tmp/scorecard.json" >/dev/null 2>&1; then
	echo "PASS track_cuda/scorecard_check"
else
	echo "FAIL track_cuda/scorecard_check: $("$KA" scorecard check "$tmp/scorecard.json" 2>&1 | head -1)"
fi
ok=$(python3 -c 'import json,sys; print(sum(json.loads(l)["verdict"] == "ok" for l in open(sys.argv[1])))' "$tmp/results.jsonl" 2>/dev/null)
if [ "$ok" = "$want" ]; then echo "PASS track_cuda/verdicts"; else echo "FAIL track_cuda/verdicts: ${ok:-no} ok of $want"; fi
# Per task: 1 baseline job and up to 2 replies (one distinct source).
jobs=$(sed -n 's/.*compiled ahead on [0-9]* threads: \([0-9]*\) jobs.*/\1/p' "$tmp.err" | tail -1)
if [ -n "$jobs" ] && [ "$jobs" -ge "$n" ] && [ "$jobs" -le $((3 * n)) ]; then
	echo "PASS track_cuda/compiled_ahead"
else
	echo "FAIL track_cuda/compiled_ahead: $(grep -E 'compiled ahead|wall' "$tmp.err" | tr '\n' ' ')"
fi
