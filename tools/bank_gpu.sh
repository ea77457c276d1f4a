#!/usr/bin/env bash
# tools/bank_gpu.sh OUT [TASK_DIR...]: on a machine with an NVIDIA GPU, grade
# every task's CUDA solution with the full protocol (this runs the task's
# eager.cu and compiled.cu baselines interleaved with it and checks them
# against gold) and write OUT/bank_gpu.jsonl (one grade result per task) and
# OUT/bank_gpu.md: per task the verdict, the solution's time, eager.cu and
# compiled.cu times, the speedups with their CIs, and, where
# bank/calibration/<gpu>.json exists (tools/calibrate.py), eager.cu /
# torch-eager and compiled.cu / torch.compile. Default: every task of
# bank/public. Exits 0 with a message where there is no GPU.
set -u
OUT=${1:?usage: tools/bank_gpu.sh OUT [TASK_DIR...]}
shift
KA=${KA:-build/ka}
MAXS=${BANK_GPU_MAX_SECONDS:-5}
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "bank_gpu: no NVIDIA GPU here; nothing measured"
	exit 0
fi
mkdir -p "$OUT/grades"
tasks=("$@")
if [ ${#tasks[@]} -eq 0 ]; then
	for d in bank/public/*/*/; do [ -f "$d/task.json" ] && tasks+=("${d%/}"); done
fi
: >"$OUT/bank_gpu.jsonl"
for t in "${tasks[@]}"; do
	name=$(basename "$t")
	sol="$t/solutions/cuda.cu"
	[ -f "$sol" ] || { echo "bank_gpu: $t has no solutions/cuda.cu"; continue; }
	t0=$(date +%s.%N)
	"$KA" grade --target cuda --task "$t" --kernel "$sol" --max-seconds "$MAXS" \
		--workdir "$OUT/work" --json "$OUT/grades/$name.json" >"$OUT/grades/$name.log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	python3 - "$OUT/grades/$name.json" "$t" "$rc" "$t0" "$t1" >>"$OUT/bank_gpu.jsonl" <<'PY'
import json, sys
path, task, rc, t0, t1 = sys.argv[1:6]
try:
    r = json.load(open(path))
except Exception as e:
    r = {"verdict": "none", "detail": "no result (exit %s): %s" % (rc, e)}
r["task_dir"] = task
r["exit"] = int(rc)
r["wall_s"] = float(t1) - float(t0)
print(json.dumps(r))
PY
	echo "bank_gpu: $name $(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(r.get("verdict"), (r.get("speedup_eager") or {}).get("median"), (r.get("detail") or "")[:200].replace("\n"," "))' "$OUT/bank_gpu.jsonl")"
done
rm -rf "$OUT/work"
python3 tools/bank_table.py "$OUT"
