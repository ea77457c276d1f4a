#!/usr/bin/env bash
# GPU tier: the CUDA runner tells a kernel's CUPTI records by the graph
# node that launched it, not by CUPTI's name (slot_nodes in
# src/runner/run_cuda.cu; docs/grader.md, "CUPTI").
#  - names: 12 variants of a solution, each with kernels of its own names,
#    graded one after another by one warm runner, are all `ok`. CUPTI names
#    a later module's kernel after an unloaded one of the same handle
#    (tools/diag/cupti_names.cu: 364 of 400), which, read by name, was a
#    false `implausible_time` ("not from the plan").
#  - memory: 50 variants that each hold a 3 GiB __device__ array (150 GiB in
#    all, more than the H200's 141) graded by one runner are all `ok`: each
#    module is unloaded with its slot, so none holds the device's memory
#    for the grades after it, and the reused handles are still attributed.
#    (3 GiB: nvcc gives the host object a shadow of the same size, and the
#    recorder's 4 GiB address-space limit refuses an 8 GiB one.)
# SKIP where there is no GPU or no CUDA runner.
set -u
. tests/gpu/lib/need_gpu.sh runner_names
tmp=${KA_GPU_OUT:-$(mktemp -d)}/runner_names
mkdir -p "$tmp"
task=bank/public/L1/gelu_bias_scale
sol=$task/solutions/cuda.cu

# grade_all NAME WANT FILE...: one `ka grade` of the files (one runner),
# then PASS when there are WANT result lines and every one is `ok`.
grade_all() {
	local name=$1 want=$2
	shift 2
	local args=() f
	for f in "$@"; do args+=(--kernel "$f"); done
	"$KA" grade --target cuda --task "$task" "${args[@]}" --graders 1 --no-timing \
		--workdir "$tmp/work" --json "$tmp/$name.jsonl" >"$tmp/$name.log" 2>&1
	local rc=$?
	local summary
	summary=$(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [(i, r["verdict"], r.get("detail", "")[:200]) for i, r in enumerate(rows) if r["verdict"] != "ok"]
print(len(rows), len(bad), bad[:3])' "$tmp/$name.jsonl" 2>/dev/null)
	set -- $summary
	if [ "$rc" -eq 0 ] && [ "${1:-0}" = "$want" ] && [ "${2:-1}" = 0 ]; then
		echo "PASS runner_names/$name ($want graded ok by one runner)"
	else
		echo "FAIL runner_names/$name: want $want ok, got '$summary' (exit $rc): $(tail -c 600 "$tmp/$name.log" | tr '\n' ' ')"
	fi
}

names=()
for i in $(seq 1 12); do
	f=$tmp/names_$i.cu
	sed "s/gelu_scalar/gelu_scalar_v$i/g; s/gelu_vec/gelu_vec_v$i/g" "$sol" >"$f"
	names+=("$f")
done
grade_all names 12 "${names[@]}"

big=()
for i in $(seq 1 50); do
	f=$tmp/big_$i.cu
	# A 3 GiB array, referenced by the tail kernel (never written: i >= 0).
	sed "s/gelu_scalar/gelu_scalar_b$i/g; s/gelu_vec/gelu_vec_b$i/g" "$sol" |
		sed "s/^__global__ void gelu_scalar_b$i(/__device__ float ka_big_${i}[3][1 << 28];\n\n&/" |
		sed "s/^\(\t*\)if (i < n) {/\1if (i == -1)\n\1\tka_big_${i}[1][0] = 0.f;\n\1if (i < n) {/" >"$f"
	big+=("$f")
done
if ! grep -q "ka_big_1\[1\]\[0\]" "$tmp/big_1.cu"; then
	echo "FAIL runner_names/memory: the fixture was not made (the solution's tail kernel changed?)"
else
	grade_all memory 50 "${big[@]}"
fi
