#!/usr/bin/env bash
# The CUDA grader's stages that need no GPU, in the quick tier: every CUDA
# fixture is compiled by nvcc and recorded in the sandbox against a stored H200
# description (ka grade --record-only), and must reach its record-stage
# verdict (tests/data/grade_cuda/expected.txt, last column). The GPU tier
# (tests/gpu/grade_cuda.sh) checks the final verdicts on the H200.
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$NVCC" ] || [ ! -x "$BUILD/ka-record-cuda" ]; then
	echo "SKIP grade_cuda_record: no nvcc or no CUDA recorder on this machine"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null; }
grep -v '^#' tests/data/grade_cuda/expected.txt | while read -r file task final want; do
	[ -n "$file" ] || continue
	name=${file%.cu}
	out="$tmp/$name.json"
	"$KA" grade --target cuda --task "bank/public/$task" --kernel "tests/data/grade_cuda/$file" \
		--record-only tests/data/cuda/h200_device.json --workdir "$tmp/work" --json "$out" \
		>"$tmp/$name.log" 2>&1
	rc=$?
	got=$(verdict_of "$out")
	if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
		echo "PASS grade_cuda_record/$name ($want; on a GPU: $final)"
	else
		echo "FAIL grade_cuda_record/$name: want $want, got '${got:-none}' (exit $rc): $(tail -c 500 "$tmp/$name.log" | tr '\n' ' ')"
	fi
done
# The starter solutions and baselines record cleanly too.
. tests/e2e/lib/bank_tasks.sh
for sol in $(for t in $(bank_tasks); do echo "$t/solutions/cuda.cu"; done); do
	[ -f "$sol" ] || continue
	tdir=$(dirname "$(dirname "$sol")")
	name=$(basename "$tdir")
	"$KA" grade --target cuda --task "$tdir" --kernel "$sol" --record-only tests/data/cuda/h200_device.json \
		--workdir "$tmp/work" --json "$tmp/sol.json" >"$tmp/sol.log" 2>&1
	got=$(verdict_of "$tmp/sol.json")
	if [ "$got" = ok ]; then
		echo "PASS grade_cuda_record/solution_$name"
	else
		echo "FAIL grade_cuda_record/solution_$name: got '${got:-none}': $(tail -c 500 "$tmp/sol.log" | tr '\n' ' ')"
	fi
done
# The host object may hold only what a compiler writes (docs/cuda-target.md
# step 5), whichever compile path and linker: bent_dynsym.cu with its
# section (type 11, a second dynamic symbol table) swapped for another of
# the class (a dynamic table, a GNU hash table, a data section named as a
# linker's .dynstr) is forbidden on both paths, for the host object.
bent=tests/data/grade_cuda/bent_dynsym.cu
while read -r name section; do
	line='__asm__(".section '"$section"'\n.balign 8\n.quad 0, 0\n.previous\n");'
	LINE=$line awk 'NR == 5 { print ENVIRON["LINE"]; next } NR != 6' "$bent" >"$tmp/$name.cu"
	if cmp -s "$bent" "$tmp/$name.cu"; then
		echo "FAIL grade_cuda_record/bent_$name: the edit of $bent changed nothing"
		continue
	fi
	for path in split nvcc; do
		KA_CUDA_COMPILER=$path "$KA" grade --target cuda --task bank/public/L1/gelu_bias_scale \
			--kernel "$tmp/$name.cu" --record-only tests/data/cuda/h200_device.json \
			--workdir "$tmp/work" --json "$tmp/$name.json" >"$tmp/$name.log" 2>&1
		got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["verdict"], d.get("detail", ""))' "$tmp/$name.json" 2>/dev/null)
		case "$got" in
		"forbidden the host object: "*) echo "PASS grade_cuda_record/bent_${name}_$path" ;;
		*) echo "FAIL grade_cuda_record/bent_${name}_$path: want forbidden for the host object, got '${got:-none}': $(tail -c 300 "$tmp/$name.log" | tr '\n' ' ')" ;;
		esac
	done
done <<'EOF2'
dynamic .bent,\"aw\",@6
gnu_hash .bent,\"a\",@0x6ffffff6
dynstr_name .dynstr,\"a\",@progbits
EOF2
# Several candidates in one session, compiled ahead: with --jobs 1 a child
# process compiles them one after another while the grader grades, the grader
# waiting only for its own candidate's compile; --jobs 0 compiles each in its
# turn. Same verdicts, in order, either way.
L1=bank/public/L1/gelu_bias_scale
for jobs in 1 0; do
	for i in 1 2 3; do sed "1i // jobs $jobs copy $i $$" "$L1/solutions/cuda.cu" >"$tmp/m$jobs-$i.cu"; done
	"$KA" grade --target cuda --task "$L1" --kernel "$tmp/m$jobs-1.cu" \
		--kernel tests/data/grade_cuda/opens_file.cu --kernel "$tmp/m$jobs-2.cu" \
		--kernel "$tmp/m$jobs-3.cu" --jobs $jobs --record-only tests/data/cuda/h200_device.json \
		--workdir "$tmp/work-$jobs" --json "$tmp/many$jobs.jsonl" >"$tmp/many$jobs.log" 2>&1
	rc=$?
	got=$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["verdict"] for l in open(sys.argv[1])))' "$tmp/many$jobs.jsonl" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$got" = "ok forbidden ok ok" ]; then
		echo "PASS grade_cuda_record/many_jobs_$jobs"
	else
		echo "FAIL grade_cuda_record/many_jobs_$jobs: exit $rc, verdicts '$got': $(tail -c 400 "$tmp/many$jobs.log" | tr '\n' ' ')"
	fi
done
