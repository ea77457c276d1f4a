#!/usr/bin/env bash
# tools/bench_gpu.sh OUTDIR: the GPU figures of docs/PERF.md, on the machine
# it runs on (an NVIDIA GPU, nvcc). Writes OUTDIR/*.json and prints a summary;
# docs/PERF.md quotes them with the command, the machine and the date.
# `make bench` calls it. It needs an NVIDIA GPU, its driver, nvcc and the
# CUDA runner; where one is missing it says which and exits 0, measuring
# nothing (the figures are meaningless without a GPU).
set -u
OUT=${1:-out/bench}
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
if ! { [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; }; then
	echo "bench_gpu: needs an NVIDIA GPU, and there is none here: nothing measured"
	exit 0
fi
if [ ! -x "$BUILD/ka-run-cuda" ] || ! command -v nvcc >/dev/null; then
	echo "bench_gpu: needs nvcc on PATH and $BUILD/ka-run-cuda (make builds it where nvcc is): nothing measured"
	exit 0
fi
PARTS=${BENCH_PARTS:-probe rep lat thr cap}
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
W="$OUT/work"
if want probe; then
echo "== probe"
nvcc -O2 -arch=sm_90a -o "$OUT/gpu_probe" tools/gpu_probe.cu && "$OUT/gpu_probe" | tee "$OUT/probe.json"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/nvidia-smi.csv"

fi
if want rep; then
echo "== repeatability: the same kernels in two separate runner sessions"
for run in 1 2; do
	for t in L1/gelu_bias_scale L2/gemm_bias_gelu L3/softmax_rows; do
		"$KA" grade --target cuda --task bank/public/$t --kernel bank/public/$t/solutions/cuda.cu \
			--max-seconds 30 --workdir "$W" --json "$OUT/rep$run-$(basename $t).json" | grep -E "verdict|time|eager|compiled|seconds"
	done
done

fi
if want lat; then
echo "== warm-runner latency: compile to verdict with speedup CI (fresh source each, compiled in turn)"
mkdir -p "$OUT/lat"
for i in 0 1 2 3 4 5; do
	sed "1i // variant $i $RANDOM$RANDOM" bank/public/L1/gelu_bias_scale/solutions/cuda.cu > "$OUT/lat/v$i.cu"
done
# v0 warms the runner and builds the baselines; v1..v5 are the figure.
"$KA" grade --target cuda --task bank/public/L1/gelu_bias_scale --kernel "$OUT/lat/v0.cu" \
	--kernel "$OUT/lat/v1.cu" --kernel "$OUT/lat/v2.cu" --kernel "$OUT/lat/v3.cu" \
	--kernel "$OUT/lat/v4.cu" --kernel "$OUT/lat/v5.cu" --jobs 0 --workdir "$W" \
	--json "$OUT/latency.jsonl" | grep -E "kernel|verdict|time|seconds|graded"

fi
if want thr; then
# Graded candidates per second with the full protocol (issue 21): fresh
# sources (nothing cached), compiled ahead (ka grade --jobs), graded by 1 and by
# THR_GRADERS graders on the one GPU (docs/grader.md, "Several graders on one
# device"); the L1 task at 32 and 256 candidates, an L2 and an L3 task at 32.
thr() { # task n graders tag [extra]
	local task=$1 n=$2 g=$3 tag=$4
	shift 4
	local dir="$OUT/thr/$tag" args=()
	mkdir -p "$dir"
	for i in $(seq 1 "$n"); do
		sed "1i // $tag candidate $i $RANDOM$RANDOM" bank/public/$task/solutions/cuda.cu >"$dir/c$i.cu"
		args+=(--kernel "$dir/c$i.cu")
	done
	echo "-- $tag: $task, $n candidates, $g grader(s) $*"
	"$KA" grade --target cuda --task bank/public/$task "${args[@]}" ${THR_JOBS:+--jobs "$THR_JOBS"} --graders "$g" \
		--profile "$@" --workdir "$W" --json "$OUT/thr-$tag.jsonl" | sed -n '/^graded/,$p' | tee "$OUT/thr-$tag.txt"
	rm -rf "$dir"
	# THR_BESIDE_JOBS=N: each plain run of several graders (not -whole,
	# not -nt) once more with N compile-ahead processes (16 on a 16-core
	# host: ka grade's default before commit 36c2548), fresh sources again,
	# so the two widths stand beside each other on one machine in one call.
	# (The run beside is tagged -jN, so it has no run beside it.)
	case "$tag" in *-g"$G") ;; *) return 0 ;; esac
	if [ -n "${THR_BESIDE_JOBS:-}" ] && [ "$g" != 1 ]; then
		THR_JOBS=$THR_BESIDE_JOBS thr "$task" "$n" "$g" "$tag-j$THR_BESIDE_JOBS" "$@"
	fi
}
# THR_JOBS: ka grade's --jobs (compile-ahead processes); unset, ka's default
# (half the cores until each grader has its first candidate, then all).
G=${THR_GRADERS:-4}
# THR_QUICK=1: the 32-candidate runs with G graders only (and L1 with one);
# THR_QUICK=2: L1 with one and with G graders only.
q=${THR_QUICK:-0}
thr L1/gelu_bias_scale 32 1 l1-32-g1
# The same without the call pipeline (docs/grader.md, "Call-level overlap").
[ "$q" = 2 ] || thr L1/gelu_bias_scale 32 1 l1-32-g1-serial --pipeline off
thr L1/gelu_bias_scale 32 "$G" l1-32-g$G
# The same with whole timed calls held exclusive (docs/grader.md, "Phased
# timed calls"): the previous build's locking, beside the new one.
[ "$q" = 2 ] || KA_PHASED_CALLS=off thr L1/gelu_bias_scale 32 "$G" l1-32-g$G-whole
if [ "$q" != 2 ]; then
	[ "$q" = 1 ] || thr L1/gelu_bias_scale 256 "$G" l1-256-g$G
	[ "$q" = 1 ] || thr L1/gelu_bias_scale 32 "$G" l1-32-g$G-nt --no-timing
	[ "$q" = 1 ] || thr L2/gemm_bias_gelu 32 1 l2-32-g1
	thr L2/gemm_bias_gelu 32 "$G" l2-32-g$G
	[ "$q" = 1 ] || thr L3/softmax_rows 32 1 l3-32-g1
	thr L3/softmax_rows 32 "$G" l3-32-g$G
fi

fi
if want cap; then
echo "== capability track, archive model, k = 5, whole public bank"
start=$(date +%s.%N)
# CAP_TIMEOUT: seconds before the run is stopped (0: none); the summary
# then covers the samples graded so far (results.jsonl is journaled).
timeout "${CAP_TIMEOUT:-0}" "$KA" --track capability --api-model archive:bank/public --tier all --target cuda --k 5 \
	--graders-per-gpu "${THR_GRADERS:-4}" --out "$OUT/cap" --fresh --verbose 2>"$OUT/cap.log"
end=$(date +%s.%N)
python3 - "$OUT/cap" "$start" "$end" <<'PY' | tee "$OUT/capability.txt"
import json, sys
d, s, e = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
wall = e - s
runner = verify = total = wait = 0.0
n = 0
per_task, verdicts, phases = {}, {}, {}
import sqlite3  # the journal: it holds every grade made, also of a run stopped by CAP_TIMEOUT
db = sqlite3.connect(d + "/journal.sqlite")
for name, verdict, result in db.execute("SELECT task, verdict, result FROM grades"):
    try:
        g = json.loads(result)
    except ValueError:
        g = {}
    sec = (g.get("seconds") or {})
    per_task[name] = per_task.get(name, 0.0) + sec.get("total", 0.0)
    ph = phases.setdefault(name, {})
    for k in ("compile", "record", "correctness", "timing", "runner", "verify", "device_wait", "setup"):
        ph[k] = ph.get(k, 0.0) + sec.get(k, 0.0)
    ph["n"] = ph.get("n", 0) + 1
    verdicts[verdict] = verdicts.get(verdict, 0) + 1
    runner += sec.get("runner", 0.0)
    verify += sec.get("verify", 0.0)
    wait += sec.get("device_wait", 0.0)
    total += sec.get("total", 0.0)
    n += 1
print(f"capability: {n} samples, wall {wall:.1f} s, grading {total:.1f} s, waiting for the GPU runner {runner:.1f} s ({100*runner/wall:.0f}% of wall), parent verifying outputs {verify:.1f} s, waiting for another grader {wait:.1f} s")
print("verdicts:", ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
print("slowest tasks (grading seconds summed over their samples):",
      ", ".join(f"{k} {v:.1f}" for k, v in sorted(per_task.items(), key=lambda kv: -kv[1])[:10]))
for k, v in sorted(per_task.items(), key=lambda kv: -kv[1])[:10]:
    ph = phases[k]
    print(f"  {k}: {ph['n']} samples, per sample " + ", ".join(
        f"{p} {ph[p] / ph['n']:.2f}" for p in ("compile", "record", "correctness", "timing", "runner", "verify", "device_wait", "setup")))
PY
fi
