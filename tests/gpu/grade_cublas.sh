#!/usr/bin/env bash
# GPU tier: cuBLAS record/replay on a real NVIDIA GPU (docs/cuda-target.md,
# "cuBLAS"). (1) The cuBLAS + fused-epilogue candidates of the two tasks whose
# policy lists cublas grade ok with timing against the native eager and
# compiled baselines: the runner replays their cuBLAS steps with its own handle
# inside the captured graph, and CUPTI accepts cuBLAS's kernels. (2) Hand-
# written plans that bypass the recorder (lda too small, m past the buffers, a
# batch stride past C) are refused by the runner itself before cuBLAS is
# called: launch_error naming the field. The hostile candidates' record-stage
# verdicts are in tests/data/grade_cuda/expected.txt (tests/gpu/grade_cuda.sh
# grades them too). SKIP where there is no GPU or no CUDA runner.
set -u
. tests/gpu/lib/need_gpu.sh grade_cublas
tmp=${KA_GPU_OUT:-$(mktemp -d)}
mkdir -p "$tmp"
field() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }

for row in cublas_softmax:L2/gemm_bias_softmax cublas_l2norm:L2/gemm_l2norm_bf16; do
	name=${row%%:*} task=${row#*:}
	out="$tmp/$name.json"
	"$KA" grade --target cuda --task "bank/public/$task" --kernel "tests/data/grade_cuda/$name.cu" \
		--max-seconds 20 --workdir "$tmp/work" --json "$out" >"$tmp/$name.log" 2>&1
	rc=$?
	line=$(field "$out" '"%s %s %s %s" % (r["verdict"], r["speedup_eager"] and round(r["speedup_eager"]["median"],3), r["speedup_compiled"] and round(r["speedup_compiled"]["median"],3), r["time_us"] and round(r["time_us"]["median"],2))')
	set -- $line
	if [ "$rc" -eq 0 ] && [ "${1:-}" = ok ] && [ "${2:-None}" != None ] && [ "${3:-None}" != None ]; then
		echo "PASS grade_cublas/$name (time ${4} us, vs eager ${2}x, vs compiled ${3}x)"
	else
		echo "FAIL grade_cublas/$name: ${line:-no result} (exit $rc): $(tail -c 600 "$tmp/$name.log" | tr '\n' ' ')"
	fi
done

# The runner's own check, over its protocol (4-byte little-endian length +
# JSON): x [64 x 16], w [32 x 16], b [32], y [64 x 32] fp32, the GEMM of
# gemm_bias_softmax (m = N = 32, n = M = 64, k = K = 16) made hostile.
python3 - "$BUILD/ka-run-cuda" >"$tmp/runner.out" 2>"$tmp/runner.err" <<'PY'
import json, struct, subprocess, sys
p = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def ask(obj):
    s = json.dumps(obj).encode()
    p.stdin.write(struct.pack("<I", len(s)) + s)
    p.stdin.flush()
    n = struct.unpack("<I", p.stdout.read(4))[0]
    r = json.loads(p.stdout.read(n))
    for b in r.get("blobs", []):
        p.stdout.read(b)
    return r
ask({"op": "hello"})
tensors = [{"bytes": 64 * 16 * 4, "dtype": 0}, {"bytes": 32 * 16 * 4, "dtype": 0},
           {"bytes": 32 * 4, "dtype": 0}, {"bytes": 64 * 32 * 4, "dtype": 0}]
base = {"op": "gemm", "api": "sgemm", "transa": 1, "transb": 0, "m": 32, "n": 64, "k": 16,
        "alpha": 1.0, "beta": 0.0, "a": {"buf": 1, "offset": 0}, "atype": 0, "lda": 16,
        "stride_a": 0, "b": {"buf": 0, "offset": 0}, "btype": 0, "ldb": 16, "stride_b": 0,
        "c": {"buf": 3, "offset": 0}, "ctype": 0, "ldc": 32, "stride_c": 0, "batch": 1,
        "compute": 68, "algo": -1, "math_mode": 0}
cases = {"lda_small": {"lda": 15}, "m_too_large": {"m": 33, "ldc": 33},
         "batch_past_c": {"api": "sgemm_strided", "batch": 2, "stride_c": 2048},
         "offset_past_c": {"c": {"buf": 3, "offset": 4}}}
for name, change in cases.items():
    op = dict(base, **change)
    plan = {"format": "ka-plan/2", "target": "cuda", "status": 0, "programs": [],
            "kernels": [], "workspaces": [], "ops": [op]}
    r = ask({"op": "load", "slot": 0, "plan": plan, "tensors": tensors, "module": "/nonexistent"})
    print(name, r.get("verdict"), r.get("detail", r.get("error", "")))
ask({"op": "quit"})
PY
for want in "lda_small launch_error ops[0]: cublasSgemm_v2: lda = 15 is less than max(1, k = 16)" \
	"m_too_large launch_error ops[0]: cublasSgemm_v2: A: 2112 bytes from buffer 1 + 0 run past its end (2048 bytes)" \
	"batch_past_c launch_error ops[0]: cublasSgemmStridedBatched: C: 16384 bytes from buffer 3 + 0 run past its end (8192 bytes)" \
	"offset_past_c launch_error ops[0]: cublasSgemm_v2: C: 8192 bytes from buffer 3 + 4 run past its end (8192 bytes)"; do
	name=${want%% *}
	if grep -qxF "$want" "$tmp/runner.out"; then
		echo "PASS grade_cublas/runner_$name"
	else
		echo "FAIL grade_cublas/runner_$name: want '$want', got '$(grep "^$name " "$tmp/runner.out")' $(tail -c 300 "$tmp/runner.err" | tr '\n' ' ')"
	fi
done
