#!/usr/bin/env bash
# Inputs of every generator kind through the whole grader: the fixture tasks
# in tests/data/tasks_good take fp32 normal, fp16 uniform, bf16 normal and
# int32 int inputs and give fp32 and fp64 outputs. Grading a correct candidate
# compares the device's generated inputs with the CPU's, bit for bit, on
# every untimed call (a mismatch is a grader failure, exit 1): on OpenCL/PoCL
# here, and at the CUDA record stage (the GPU tier runs tests/gpu/gen_identity.sh).
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null; }
for t in add_scale row_dot; do
	if [ -x "$BUILD/ka-run-opencl" ] && [ "$(clinfo -l 2>/dev/null | grep -c Platform)" != 0 ]; then
		"$KA" grade --task tests/data/tasks_good/$t --target opencl --kernel tests/data/grade_dtypes/$t.c \
			--no-timing --workdir "$tmp/w" --json "$tmp/$t.json" >"$tmp/$t.log" 2>&1
		rc=$?
		got=$(verdict_of "$tmp/$t.json")
		if [ "$rc" -eq 0 ] && [ "$got" = ok ]; then
			echo "PASS grade_dtypes/opencl_$t"
		else
			echo "FAIL grade_dtypes/opencl_$t: exit $rc, verdict '${got:-none}': $(tail -c 400 "$tmp/$t.log" | tr '\n' ' ')"
		fi
	else
		echo "SKIP grade_dtypes/opencl_$t: no OpenCL runner or platform"
	fi
	if [ -x "$BUILD/ka-record-cuda" ] && { command -v "${NVCC:-nvcc}" >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; }; then
		"$KA" grade --task tests/data/tasks_good/$t --target cuda --kernel tests/data/grade_dtypes/$t.cu \
			--record-only tests/data/cuda/h200_device.json --workdir "$tmp/w" --json "$tmp/c$t.json" >"$tmp/c$t.log" 2>&1
		got=$(verdict_of "$tmp/c$t.json")
		if [ "$got" = ok ]; then
			echo "PASS grade_dtypes/cuda_record_$t"
		else
			echo "FAIL grade_dtypes/cuda_record_$t: verdict '${got:-none}': $(tail -c 400 "$tmp/c$t.log" | tr '\n' ' ')"
		fi
	else
		echo "SKIP grade_dtypes/cuda_record_$t: no nvcc or CUDA recorder"
	fi
done
