#!/bin/bash
# tools/forkexp/run.sh [OUT]: the fork-server feasibility experiment of
# docs/compile.md, section 7, from scratch (needs nvcc, build/ka and
# build/ka-cudaphases; about 10 minutes on 2 cores):
#  1. a template work folder from one split compile (KA_CUDAC_KEEP=1);
#  2. a work folder per source (tests/data/cuda, tests/data/harden but the
#     template bomb, the bank's L1/L2/L3 CUDA solutions, and variants of the
#     L1 solution made here: errors, warnings, an anonymous namespace, a
#     #define and a #line before everything, a byte-order mark);
#  3. whether every .ii starts with the same prefix (up to the line marker
#     that enters candidate.cu after the force-included cuda_runtime.h);
#  4. cicc compute_90, cicc compute_90a and cudafe++ fresh vs forked from
#     one server (forktest.sh): every output file and log compared;
#  5. times of fresh runs vs forked children for the L1 row_sum and L2
#     gemm_bias_gelu_bf16 solutions (timing.sh, 5 runs each).
set -eu
H=$(cd "$(dirname "$0")" && pwd)
R=$(cd "$H/../.." && pwd)
OUT=${1:-/tmp/forkexp}
rm -rf "$OUT"
mkdir -p "$OUT/src" "$OUT/c"
gcc -O2 -Wall -shared -fPIC -o "$OUT/fsrv_exp.so" "$H/fsrv_exp.c" -ldl
KA_CUDAC_KEEP=1 "$R/build/ka" grade --target cuda --task "$R/bank/public/L1/row_sum" \
	--kernel "$R/bank/public/L1/row_sum/solutions/cuda.cu" --workdir "$OUT/t" \
	--json "$OUT/t.json" --record-only "$R/tests/data/cuda/h200_device.json" >"$OUT/t.log" 2>&1
T=$(sed -n 's/^cudac: kept //p' "$OUT/t.log")
base="$R/bank/public/L1/row_sum/solutions/cuda.cu"
s=$OUT/src
{ cat "$base"; echo 'int broken( {'; } >"$s/syntax.cu"
{ cat "$base"; echo '__global__ void k2(float *p) { p[0] = undeclared_fn(1.0f); }'; } >"$s/undecl.cu"
{ cat "$base"; echo 'void hostf(); __global__ void k3(float *p) { hostf(); }'; } >"$s/hostcall.cu"
{ cat "$base"; echo '__global__ void k4(float *p) { float q[4]; p[0] = q[5]; }'; } >"$s/warn.cu"
{ echo '#define __forceinline__ inline'; cat "$base"; } >"$s/define_first.cu"
{ cat "$base"; echo 'namespace { __global__ void anon_k(float *p) { p[0] = 1; } }'; } >"$s/anon.cu"
{ echo '#line 1 "other.cu"'; cat "$base"; } >"$s/line.cu"
{ printf '\xef\xbb\xbf'; cat "$base"; } >"$s/bom.cu"
for f in "$s"/*.cu "$R"/tests/data/cuda/*.cu "$R"/tests/data/harden/cuda_*.cu \
	"$R"/bank/public/L[123]/*/solutions/cuda.cu; do
	n=${f#"$R"/}
	n=${n#"$OUT"/}
	"$H/prep.sh" "$T" "$f" "$OUT/c/$(echo "$n" | tr '/' '_')"
done
mapfile -t D < <(ls -d "$OUT"/c/* | grep -v include_dotdot)
L1=$OUT/c/bank_public_L1_row_sum_solutions_cuda.cu
cut=$(python3 - "$L1" <<'PY'
import sys
m = b'# 0 "<command-line>" 2\n'
for k in ["compute_90.cpp1.ii", "cpp4.ii"]:
    d = open(sys.argv[1] + "/keep/candidate." + k, "rb").read()
    print(d.index(m + b'# 1 "candidate.cu"\n') + len(m), end=" ")
PY
)
read -r NDEV NHOST <<<"$cut"
echo "prefix: $NDEV bytes (device .ii), $NHOST bytes (host .ii)"
python3 - "$L1" "$NDEV" "$NHOST" "${D[@]}" <<'PY'
import sys, os
l1, nd, nh, dirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
for k, n in [("compute_90.cpp1.ii", nd), ("compute_90a.cpp1.ii", nd), ("cpp4.ii", nh)]:
    ref = open(l1 + "/keep/candidate." + k, "rb").read()[:n]
    bad = [os.path.basename(d) for d in dirs
           if open(d + "/keep/candidate." + k, "rb").read()[:n] != ref]
    print("%s: %d folders, prefix differs in %d %s" % (k, len(dirs), len(bad), bad))
PY
for st in "cicc compute_90a:keep/candidate.compute_90a.cpp1.ii:$NDEV" \
	"cicc compute_90:keep/candidate.compute_90.cpp1.ii:$NDEV" "cudafe++:keep/candidate.cpp4.ii:$NHOST"; do
	IFS=: read -r step in n <<<"$st"
	"$H/forktest.sh" "$OUT/fsrv_exp.so" "$step" "$in" "$n" "${D[@]}" >"$OUT/forktest-${step// /_}.txt" 2>&1
	echo "$step: $(grep -c '^fresh' "$OUT/forktest-${step// /_}.txt") fresh runs, $(grep -c '^fork' "$OUT/forktest-${step// /_}.txt") forked," \
		"$(grep -c 'DIFF\|EXTRA' "$OUT/forktest-${step// /_}.txt") files differ; failing runs: $(grep -c '^fresh.*status [1-9]' "$OUT/forktest-${step// /_}.txt") fresh," \
		"$(grep -c '^fork.*status [1-9]' "$OUT/forktest-${step// /_}.txt") forked"
done
L2=$OUT/c/bank_public_L2_gemm_bias_gelu_bf16_solutions_cuda.cu
for st in "cicc compute_90a:keep/candidate.compute_90a.cpp1.ii:$NDEV" "cudafe++:keep/candidate.cpp4.ii:$NHOST"; do
	IFS=: read -r step in n <<<"$st"
	echo "== $step"
	"$H/timing.sh" "$OUT/fsrv_exp.so" "$step" "$in" "$n" 5 "$L1" "$L2"
done
