#!/usr/bin/env bash
# cuda_split.sh (bank tier): the split compile (the default) and one nvcc
# run (KA_CUDA_COMPILER=nvcc) on every CUDA solution of bank/public: the same
# verdict at the record stage (compile and the sandboxed host code against
# the H200's description), and the same fat binary byte for byte in the two
# compiled objects (the `.nv_fatbin` section the runner loads: the same
# cubin, so the same SASS). docs/compile.md; the quick tier compares the
# fixtures and one solution per tier (tests/unit/test_cudasplit.c).
set -u
KA=${KA:-build/ka}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/e2e/lib/bank_tasks.sh
verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null; }
if ! command -v objcopy >/dev/null; then
	echo "SKIP cuda_split: no objcopy"
	exit 0
fi
for t in $(KA_TEST_BANK=all bank_tasks); do
	name=$(basename "$t")
	[ -f "$t/solutions/cuda.cu" ] || continue
	why=
	for path in nvcc split; do
		w="$tmp/$name-$path"
		KA_CUDA_COMPILER=$path "$KA" grade --task "$t" --target cuda --kernel "$t/solutions/cuda.cu" \
			--record-only tests/data/cuda/h200_device.json --workdir "$w" --json "$w.json" \
			>"$w.log" 2>&1
		so=$(ls "$w"/cuda/cu-*.so 2>/dev/null | head -1)
		[ -n "$so" ] && objcopy -O binary --only-section=.nv_fatbin "$so" "$w.fatbin"
	done
	vn=$(verdict_of "$tmp/$name-nvcc.json") vs=$(verdict_of "$tmp/$name-split.json")
	if [ "$vn" != ok ] || [ "$vs" != ok ]; then
		why="verdicts nvcc '${vn:-none}', split '${vs:-none}': $(tail -c 300 "$tmp/$name-split.log" | tr '\n' ' ')"
	elif [ ! -s "$tmp/$name-nvcc.fatbin" ] || ! cmp -s "$tmp/$name-nvcc.fatbin" "$tmp/$name-split.fatbin"; then
		why="the fat binaries differ"
	fi
	if [ -z "$why" ]; then echo "PASS cuda_split/$name"; else echo "FAIL cuda_split/$name: $why"; fi
	rm -rf "$tmp/$name-nvcc" "$tmp/$name-split"
done
