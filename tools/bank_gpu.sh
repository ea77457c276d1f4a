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
python3 - "$OUT" <<'PY'
import glob, json, os, subprocess, sys
out = sys.argv[1]
rows = [json.loads(l) for l in open(os.path.join(out, "bank_gpu.jsonl"))]
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip().splitlines()[0]
cal = {}
p = os.path.join("bank", "calibration", gpu.replace(" ", "_") + ".json")
if os.path.exists(p):
    cal = json.load(open(p)).get("tasks", {})
def fig(f):
    return None if not f else f.get("median")
def ci(f):
    return "-" if not f else "%.2fx [%.2f, %.2f]" % (f["median"], f["lo"], f["hi"])
lines = ["| task | verdict | solution us | eager.cu us | compiled.cu us | vs eager | vs compiled | eager.cu / torch eager | compiled.cu / torch.compile |",
         "|---|---|---|---|---|---|---|---|---|"]
ok = 0
ratios = []
for r in rows:
    name = os.path.basename(r["task_dir"])
    v = r.get("verdict")
    ok += v == "ok"
    t, e, c = fig(r.get("time_us")), fig(r.get("eager_us")), fig(r.get("compiled_us"))
    ce = cal.get(name, {})
    te = (ce.get("eager") or {}).get("median_us")
    tc = (ce.get("compiled") or {}).get("median_us")
    re_ = "%.2f" % (e / te) if e and te else "-"
    rc_ = "%.2f" % (c / tc) if c and tc else "-"
    if e and te and c and tc:
        ratios.append((e / te, c / tc))
    f = lambda x: "%.1f" % x if x else "-"
    lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        name, v, f(t), f(e), f(c), ci(r.get("speedup_eager")), ci(r.get("speedup_compiled")), re_, rc_))
within = sum(1 for a, b in ratios if 0.8 <= a <= 1.25 and 0.8 <= b <= 1.25)
lines.append("")
lines.append("%d of %d solutions ok; %d of %d tasks with both baseline ratios in [0.8, 1.25] (GPU: %s)"
             % (ok, len(rows), within, len(ratios), gpu))
open(os.path.join(out, "bank_gpu.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines[-1:]))
PY
