#!/usr/bin/env bash
# GPU tier: one round of the frontier track (track 5) on CUDA against the
# fake solver and proposer (tools/frontier_gpu.sh, docs/frontier.md "On a GPU
# machine"), bounded at 120 s: every fixture of tests/data/frontier/ gets its
# documented outcome, fixture 05's out-of-bounds baseline is graded on the GPU
# as a candidate and fails there, every reached step has its wall seconds,
# the references compile as CUDA, the scorecard passes `ka scorecard check`
# and the summary's figures are written. SKIP where there is no GPU or no
# CUDA runner. KA_GPU_OUT keeps the figures (OUT/frontier/summary.md).
set -u
. tests/gpu/lib/need_gpu.sh track_frontier_cuda
base=${KA_GPU_OUT:-$(mktemp -d)}
mkdir -p "$base"
out=$base/frontier
start=$(date +%s)
KA=$KA bash tools/frontier_gpu.sh "$out" --target cuda --limit 120 >"$base/frontier.out" 2>&1
rc=$?
took=$(($(date +%s) - start))
if [ "$rc" -eq 0 ]; then
	echo "PASS track_frontier_cuda/run ($took s)"
else
	echo "FAIL track_frontier_cuda/run: exit $rc after $took s: $(tail -c 800 "$base/frontier.out" | tr '\n' ' ')"
	exit 0
fi
jv() { python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
S=$out/summary.json
want="['novelty', 'harder', 'dialect', 'gold', 'harder', 'degenerate', 'accepted']"
got=$(jv "$S" "[p['outcome'] for p in sorted(s['proposals'], key=lambda p: p['proposal'])]")
if [ "$got" = "$want" ]; then
	echo "PASS track_frontier_cuda/outcomes"
else
	echo "FAIL track_frontier_cuda/outcomes: got $got, want $want"
fi
counts=$(jv "$S" "s['accepted'], s['rejected'], s['target']")
if [ "$counts" = "(1, 6, 'cuda')" ]; then
	echo "PASS track_frontier_cuda/counts"
else
	echo "FAIL track_frontier_cuda/counts: got $counts, want (1, 6, 'cuda')"
fi
# Fixture 05's baseline: graded as a candidate on the GPU, not ok, dropped.
bl=$(jv "$S" "[p['steps']['baseline']['why'] for p in s['proposals'] if p['proposal'] == 4][0]")
case $bl in
"proposed baseline dropped; graded as a candidate on the device: ok"*)
	echo "FAIL track_frontier_cuda/oob_baseline: the out-of-bounds baseline graded ok: $bl" ;;
"proposed baseline dropped; graded as a candidate on the device: "*)
	echo "PASS track_frontier_cuda/oob_baseline (${bl#*device: })" ;;
*) echo "FAIL track_frontier_cuda/oob_baseline: $bl" ;;
esac
# Every reached step has seconds; the compile step covered CUDA.
miss=$(jv "$S" "[(p['proposal'], k) for p in s['proposals'] for k, st in p['steps'].items() if st['s'] is None]")
if [ "$miss" = "[]" ]; then
	echo "PASS track_frontier_cuda/step_seconds"
else
	echo "FAIL track_frontier_cuda/step_seconds: no seconds for $miss"
fi
cu=$(jv "$S" "sorted(set(p['steps']['compile']['why'] for p in s['proposals'] if p['steps'].get('compile', {}).get('ok') and p['steps'].get('gold', {}).get('ok')))")
case $cu in
*"CUDA sm_90a"*) echo "PASS track_frontier_cuda/cuda_compile" ;;
*) echo "FAIL track_frontier_cuda/cuda_compile: $cu" ;;
esac
if "$KA" scorecard check "$out/scorecard.json" >/dev/null 2>&1; then
	echo "PASS track_frontier_cuda/scorecard_check"
else
	echo "FAIL track_frontier_cuda/scorecard_check: $("$KA" scorecard check "$out/scorecard.json" 2>&1 | head -1)"
fi
if [ "$took" -le 120 ] && [ -s "$out/summary.md" ]; then
	echo "PASS track_frontier_cuda/bounded ($took s, $out/summary.md)"
else
	echo "FAIL track_frontier_cuda/bounded: $took s (at most 120), summary.md $([ -s "$out/summary.md" ] && echo written || echo missing)"
fi
