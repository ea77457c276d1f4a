#!/usr/bin/env bash
# GPU tier: nvcc as the cross-check of the split compile (docs/compile.md).
# tests/gpu/grade_cuda.sh grades every fixture of tests/data/grade_cuda with
# the default, split path; this grades them again with one nvcc run
# (KA_CUDA_COMPILER=nvcc) and with the split path side by side: the same
# final verdict on both, and the one expected.txt names. The device code of
# the two paths is the same byte for byte (tests/unit/test_cudasplit.c,
# tests/bank/cuda_split.sh); this checks the whole grade on a real GPU.
# SKIP where there is no GPU or no CUDA runner.
set -u
. tests/gpu/lib/need_gpu.sh cuda_split
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null; }
grep -v '^#' tests/data/grade_cuda/expected.txt | while read -r file task want rec; do
	[ -n "$file" ] || continue
	name=${file%.cu}
	got=()
	for path in nvcc split; do
		KA_CUDA_COMPILER=$path "$KA" grade --target cuda --task "bank/public/$task" \
			--kernel "tests/data/grade_cuda/$file" --no-timing --workdir "$tmp/work-$path" \
			--json "$tmp/$name-$path.json" >"$tmp/$name-$path.log" 2>&1
		got+=("$(verdict_of "$tmp/$name-$path.json")")
	done
	if [ "${got[0]}" = "$want" ] && [ "${got[1]}" = "$want" ]; then
		echo "PASS cuda_split/$name ($want on both paths)"
	else
		echo "FAIL cuda_split/$name: want $want, nvcc '${got[0]:-none}', split '${got[1]:-none}': $(tail -c 300 "$tmp/$name-split.log" | tr '\n' ' ')"
	fi
done
