#!/usr/bin/env bash
# GPU tier: the CUDA runner's generator against the CPU's, bit for bit, for
# fp32 normal, fp16 uniform, bf16 normal and int32 inputs: grading a correct
# candidate of each fixture task compares the device's input hash with the
# CPU's on every untimed call; a mismatch is a grader failure (exit 1).
set -u
. tests/gpu/lib/need_gpu.sh gen_identity
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in add_scale row_dot; do
	"$KA" grade --task tests/data/tasks_good/$t --target cuda --kernel tests/data/grade_dtypes/$t.cu \
		--no-timing --workdir "$tmp/w" --json "$tmp/$t.json" >"$tmp/$t.log" 2>&1
	rc=$?
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$tmp/$t.json" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$got" = ok ]; then
		echo "PASS gen_identity/$t"
	else
		echo "FAIL gen_identity/$t: exit $rc, verdict '${got:-none}': $(tail -c 400 "$tmp/$t.log" | tr '\n' ' ')"
	fi
done
