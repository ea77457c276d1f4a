#!/usr/bin/env bash
# starter_compile.sh: every file of the starter tasks (every task of
# bank/public with KA_TEST_BANK=all: tests/e2e/lib/bank_tasks.sh) compiles.
#   - solutions/*.c (OpenCL candidates): gcc, C17, -Wall -Wextra -Werror, as a
#     shared object (no link to OpenCL: its symbols stay undefined, as the
#     recorder provides them);
#   - eager.cu, compiled.cu, solutions/*.cu: nvcc with the grader's flags
#     (-O3 -arch=sm_90a -cudart none -Xcompiler -fPIC -shared), plus -lcublas /
#     -lcublasLt for the baselines that use them; SKIP without nvcc;
#   - ref.c as plain C with -DKA_GOLD inside a generated driver
#     (tools/ref_numpy.py --emit-driver), run once on the task's first check
#     shape with zero inputs: every output must be written and finite;
#   - ref.c as CUDA device code inside a generated kernel (SKIP without nvcc).
# Prints one PASS/FAIL/SKIP line per file. Nothing runs on a GPU.
set -u
cd "${KA_HOME:-$(dirname "$0")/../..}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
NVCC=${NVCC:-$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })}
NVFLAGS="-O3 -arch=sm_90a -cudart none -Xcompiler -fPIC -shared -std=c++17 -Iinclude -Ibank/lib"
fails=0

result() { # name rc logfile
	if [ "$2" -eq 0 ]; then
		echo "PASS starter_compile $1"
	else
		echo "FAIL starter_compile $1: $(grep -m1 -iE 'error|not finite|cannot' "$3" || head -n1 "$3")"
		fails=$((fails + 1))
	fi
}

. tests/e2e/lib/bank_tasks.sh
for d in $(bank_tasks); do
	for f in "$d"/solutions/*.c; do
		[ -f "$f" ] || continue
		gcc -std=c17 -Wall -Wextra -Werror -fPIC -shared -Iinclude -o "$tmp/cand.so" "$f" >"$tmp/log" 2>&1
		result "$f" $? "$tmp/log"
	done
	for f in "$d"/eager.cu "$d"/compiled.cu "$d"/solutions/*.cu; do
		[ -f "$f" ] || continue
		if [ -z "$NVCC" ]; then
			echo "SKIP starter_compile $f: no nvcc"
			continue
		fi
		libs=""
		grep -q 'cublas_v2.h' "$f" && libs="$libs -lcublas"
		grep -q 'cublasLt.h' "$f" && libs="$libs -lcublasLt"
		# shellcheck disable=SC2086
		"$NVCC" $NVFLAGS -o "$tmp/cand.so" "$f" $libs >"$tmp/log" 2>&1
		result "$f" $? "$tmp/log"
	done
	if ! command -v python3 >/dev/null; then
		echo "SKIP starter_compile $d/ref.c: no python3 to generate the driver"
		continue
	fi
	python3 tools/ref_numpy.py --emit-driver "$d" >"$tmp/drv.c" 2>"$tmp/log" &&
		gcc -std=c17 -Wall -Wextra -Wno-unused-parameter -Werror -O1 -DKA_GOLD -Iinclude \
			-o "$tmp/drv" "$tmp/drv.c" -lm >>"$tmp/log" 2>&1 &&
		"$tmp/drv" >>"$tmp/log" 2>&1 && grep -q '^ok [1-9]' "$tmp/log"
	result "$d/ref.c (C gold)" $? "$tmp/log"
	if [ -n "$NVCC" ]; then
		python3 tools/ref_numpy.py --emit-cuda "$d" >"$tmp/ref.cu" 2>"$tmp/log" &&
			"$NVCC" -arch=sm_90a -Iinclude -c -o "$tmp/ref.o" "$tmp/ref.cu" >>"$tmp/log" 2>&1
		result "$d/ref.c (CUDA device)" $? "$tmp/log"
	else
		echo "SKIP starter_compile $d/ref.c (CUDA device): no nvcc"
	fi
done
[ "$fails" -eq 0 ]
