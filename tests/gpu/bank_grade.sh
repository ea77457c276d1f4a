#!/usr/bin/env bash
# GPU tier: `ka bank validate --grade` (src/bank_grade.c) on the CUDA target
# for two tasks of bank/public: both solutions `ok`, and each row has the
# eager.cu / torch eager and compiled.cu / torch.compile ratios from
# bank/calibration/<this GPU>.json as numbers; where the bank holds no
# calibration of this GPU, the table says so instead (and the test checks
# that). The ratios' values are the bank's business (docs/PERF.md), not
# this test's. SKIP where there is no GPU or no CUDA runner.
set -u
. tests/gpu/lib/need_gpu.sh bank_grade
tmp=${KA_GPU_OUT:-$(mktemp -d)}/bank_grade
mkdir -p "$tmp"
"$KA" bank validate --grade --max-seconds 1 --workdir "$tmp/work" --json "$tmp/g.jsonl" \
	silu_scale softmax_rows >"$tmp/out.txt" 2>&1
rc=$?
gpu=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["device"]["name"])' "$tmp/g.jsonl" 2>/dev/null)
cal="bank/calibration/${gpu// /_}.json"
num='[0-9]+\.[0-9]{2}'
if [ -f "$cal" ]; then
	rows=$(grep -cE "^\| (silu_scale|softmax_rows) \| ok \| .* \| $num \| $num \|\$" "$tmp/out.txt")
else
	rows=$(grep -cE '^\| (silu_scale|softmax_rows) \| ok \| .* \| - \| - \|$' "$tmp/out.txt")
	grep -q 'no calibration of this device' "$tmp/out.txt" || rows=0
fi
if [ $rc -eq 0 ] && [ "$rows" = 2 ] && grep -q '^2 of 2 solutions ok' "$tmp/out.txt"; then
	echo "PASS bank_grade/cuda (2 rows, calibration ${cal})"
else
	echo "FAIL bank_grade/cuda: exit $rc, $rows rows: $(tail -8 "$tmp/out.txt" | tr '\n' '|')"
fi
