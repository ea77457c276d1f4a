#!/usr/bin/env bash
# baselines_emu.sh (bank tier): the CPU emulation harness (tools/cuda_emu,
# docs/cuda-emu.md) runs every trusted baseline of bank/public (eager.cu,
# compiled.cu) and every CUDA solution at every check shape against the
# fp64 gold with the task's tolerance, without a GPU. First the harness
# shows it can fail: a correct row sum (tests/data/cuda_emu/row_sum_tree.cu)
# passes, and each of its broken copies (a wrong index, a missing
# __syncthreads, a shared-memory race only a scrambled thread order shows,
# a write past the end, a launch over the launch bounds) and the eager
# gemm_bias_gelu without its transpose fail, each for its reason; a row sum
# whose warps shuffle after half their lanes exited passes, and fails when a
# lane reads an exited one. SKIPs where g++ or CUDA's headers are missing.
set -u
KA=${KA:-build/ka}
RUN=(python3 tools/cuda_emu/run.py --ka "$KA" -j "${KA_TEST_EMU_JOBS:-$(nproc 2>/dev/null || echo 2)}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! why=$("${RUN[@]}" --probe 2>&1); then
	echo "SKIP baselines_emu: $why"
	exit 0
fi

# results FILE.json: one "NAME STATUS MAXFRAC WHY" line per run.
results() {
	python3 - "$1" <<'PY'
import json, sys
for task, vs in sorted(json.load(open(sys.argv[1])).items()):
    for v, r in sorted(vs.items()):
        print("%s/%s %s %s %s" % (task, v, r["status"], r["maxfrac"], r["why"].replace("\n", " ")[:600]))
PY
}

# The harness's own check: each broken copy fails, for its reason.
f=tests/data/cuda_emu/row_sum_tree.cu
m="$tmp/mut"
mkdir -p "$m"
cp "$f" "$m/good.cu"
sed 's|v += xr\[c\]; // \[wrong_index\]|v += xr[c + 1];|' "$f" >"$m/wrong_index.cu"
sed '/\[missing_sync\]/d' "$f" >"$m/missing_sync.cu"
sed '/\[race\]/d' "$f" >"$m/race.cu"
sed 's|y\[blockIdx.x\] = s\[0\]; // \[oob_write\]|y[blockIdx.x + 1] = s[0];|' "$f" >"$m/oob_write.cu"
sed 's|row_sum_tree<<<(unsigned)R, T, 0, stream>>>|row_sum_tree<<<(unsigned)R, 2 * T, 0, stream>>>|' "$f" >"$m/launch_bounds.cu"
h=tests/data/cuda_emu/row_sum_halfwarp.cu
cp "$h" "$m/halfwarp.cu"
sed 's|// \[undefined_lane\]|v += __shfl_xor_sync(0xffffffffu, v, 16);|' "$h" >"$m/undefined_lane.cu"
sed 's|cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N|cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N|' \
	bank/public/L2/gemm_bias_gelu/eager.cu >"$m/no_transpose.cu"
for x in wrong_index missing_sync race oob_write launch_bounds; do
	cmp -s "$m/$x.cu" "$f" && echo "FAIL baselines_emu/self: $x.cu is not a change"
done
cmp -s "$m/undefined_lane.cu" "$h" && echo "FAIL baselines_emu/self: undefined_lane.cu is not a change"
cmp -s "$m/no_transpose.cu" bank/public/L2/gemm_bias_gelu/eager.cu && echo "FAIL baselines_emu/self: no_transpose.cu is not a change"
src=$(ls "$m"/*.cu | grep -v no_transpose | tr '\n' , | sed 's/,$//')
"${RUN[@]}" --work "$tmp/w" --tasks row_sum --source "$src" --json "$tmp/self.json" >"$tmp/self.log" 2>&1
cp "$m/race.cu" "$m/race_linear.cu"
"${RUN[@]}" --work "$tmp/w" --tasks row_sum --source "$m/race_linear.cu" --order linear --json "$tmp/linear.json" \
	>"$tmp/linear.log" 2>&1
"${RUN[@]}" --work "$tmp/w" --tasks gemm_bias_gelu --source "$m/no_transpose.cu" --json "$tmp/gemm.json" \
	>"$tmp/gemm.log" 2>&1
expect() { # file name status reason-substring
	local line
	line=$(results "$1" | grep "^[^ ]*/$2 ")
	case "$line" in
	*" $3 "*"$4"*) echo "PASS baselines_emu/self/$2: $3${4:+ ($4)}" ;;
	*) echo "FAIL baselines_emu/self/$2: expected $3${4:+ with '$4'}, got: ${line:-nothing: $(tail -c 300 "$1.log" 2>/dev/null)}" ;;
	esac
}
expect "$tmp/self.json" good pass ""
expect "$tmp/self.json" wrong_index fail "outside the tolerance"
expect "$tmp/self.json" missing_sync fail "outside the tolerance"
expect "$tmp/self.json" race fail "outside the tolerance"
expect "$tmp/self.json" oob_write fail "a write past the end of output y"
expect "$tmp/self.json" launch_bounds fail "over its __launch_bounds__ of 256"
expect "$tmp/self.json" halfwarp pass ""
expect "$tmp/self.json" undefined_lane fail "outside the tolerance"
expect "$tmp/gemm.json" no_transpose fail "outside the tolerance"
# The race needs the scrambled order: in thread order it goes unseen.
expect "$tmp/linear.json" race_linear pass ""

# The bank: every baseline and CUDA solution at every check shape.
t0=$(date +%s)
"${RUN[@]}" --work "$tmp/w" --json "$tmp/bank.json" >"$tmp/bank.log" 2>&1
rc=$?
if [ ! -s "$tmp/bank.json" ]; then
	echo "FAIL baselines_emu: run.py exited $rc without results: $(tail -c 600 "$tmp/bank.log")"
	exit 0
fi
results "$tmp/bank.json" | while read -r name status frac why; do
	if [ "$status" = pass ]; then echo "PASS baselines_emu/$name (max err/tol $frac)"; else
		echo "FAIL baselines_emu/$name: $why"; fi
done
echo "# baselines_emu: the bank in $(($(date +%s) - t0)) s"
