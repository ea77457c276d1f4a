#!/usr/bin/env bash
# GPU tier: the device gold (docs/grader.md "The gold's cost", issue 12 item
# 5). At a benchmark shape whose outputs the CPU gold cannot check in full
# (over 1 Mi elements), a correctness call is now checked on every element
# on the device against the task's fp64 gold computed there by its ref.c
# ("check": "device-full" in the grade JSON), the CPU gold still checking
# the sampled items and cross-checking the device gold there.
#   (a) the L1 gelu_bias_scale solution grades ok; its check shapes are
#       "cpu-full", its benchmark shape R=4096,C=4096 "device-full";
#   (b) tests/data/devgold/gelu_one_wrong.cu, wrong in exactly one element of
#       16 Mi at the benchmark shape only: wrong_answer at R=4096,C=4096 with
#       index 12345677 as the only mismatch (a sampled check misses it: the
#       control, with KA_DEVICE_GOLD=off, grades it ok);
#   (c) the same on L2 gemm_bias_silu (2048 x 8192 outputs): index 9876543.
# SKIP where there is no GPU or no CUDA runner.
set -u
. tests/gpu/lib/need_gpu.sh grade_devgold
tmp=${KA_GPU_OUT:-$(mktemp -d)}
mkdir -p "$tmp"
field() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }

# grade NAME TASK KERNEL [ka grade options...]: the result in $tmp/NAME.json
grade() {
	local name=$1 task=$2 kernel=$3
	shift 3
	"$KA" grade --target cuda --task "bank/public/$task" --kernel "$kernel" \
		--workdir "$tmp/work" --json "$tmp/$name.json" "$@" >"$tmp/$name.log" 2>&1
	echo $?
}
fail() { echo "FAIL grade_devgold/$1: $2: $(tail -c 600 "$tmp/$1.log" | tr '\n' ' ')"; }

# (a) the solution: ok, each check shape cpu-full, the benchmark shape device-full
rc=$(grade solution L1/gelu_bias_scale bank/public/L1/gelu_bias_scale/solutions/cuda.cu --max-seconds 5)
got=$(field "$tmp/solution.json" '"%s %s %s" % (r["verdict"], " ".join(sorted(set(c["check"] for c in r["checks"][:-1]))), r["checks"][-1]["shape"] + ":" + r["checks"][-1]["check"])')
if [ "$rc" -eq 0 ] && [ "$got" = "ok cpu-full R=4096,C=4096:device-full" ]; then
	echo "PASS grade_devgold/solution ($got)"
else
	fail solution "want 'ok cpu-full R=4096,C=4096:device-full', got '$got' (exit $rc)"
fi

# one_wrong NAME TASK KERNEL SHAPE INDEX: wrong_answer from the device check
one_wrong() {
	local name=$1 task=$2 kernel=$3 shape=$4 index=$5
	local rc got want
	rc=$(grade "$name" "$task" "$kernel" --no-timing)
	got=$(field "$tmp/$name.json" '"%s %s %s %s %s %s" % (r["verdict"], r["phase"], r["shape"], r["evidence"]["check"], r["evidence"]["count"], ",".join(str(m["index"]) for m in r["evidence"]["mismatches"]))')
	want="wrong_answer correctness $shape device-full 1 $index"
	if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
		echo "PASS grade_devgold/$name ($got)"
	else
		fail "$name" "want '$want', got '$got' (exit $rc)"
	fi
}
one_wrong gelu_one_wrong L1/gelu_bias_scale tests/data/devgold/gelu_one_wrong.cu R=4096,C=4096 12345677
one_wrong silu_one_wrong L2/gemm_bias_silu tests/data/devgold/silu_one_wrong.cu M=2048,N=8192,K=2048 9876543

# The control: with the device gold off, the same candidate is checked on a
# sample of the benchmark shape and its one wrong element escapes (256
# random items and the edges of 16 Mi: caught with probability ~2e-5).
rc=$(KA_DEVICE_GOLD=off grade control L1/gelu_bias_scale tests/data/devgold/gelu_one_wrong.cu --no-timing)
got=$(field "$tmp/control.json" '"%s %s" % (r["verdict"], r["checks"][-1]["check"])')
if [ "$rc" -eq 0 ] && [ "$got" = "ok sampled" ]; then
	echo "PASS grade_devgold/control_sampled_escapes ($got)"
else
	fail control "want 'ok sampled', got '$got' (exit $rc)"
fi
