#!/usr/bin/env bash
# lib/solutions.sh (bank tier; tests/bank/solutions_L<n>.sh run it for one
# tier, KA_BANK_TIER): every task's verified solutions get their verdict
# where this machine can run them: the OpenCL solution grades ok on PoCL
# (short timing: it checks correctness at every shape and that the timed
# phase runs, not speed), and the CUDA solution records cleanly against the
# H200's device description (no GPU needed). On a GPU, tools/bank_gpu.sh
# grades the CUDA solutions with the full protocol.
set -u
KA=${KA:-build/ka}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/e2e/lib/bank_tasks.sh
verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null; }
for t in $(KA_TEST_BANK=all bank_tasks | grep "/${KA_BANK_TIER:-L}[^/]*/[^/]*$"); do
	name=$(basename "$t")
	if [ -f "$t/solutions/opencl.c" ]; then
		"$KA" grade --task "$t" --target opencl --kernel "$t/solutions/opencl.c" --max-seconds 1 \
			--min-samples 5 --workdir "$tmp/w" --json "$tmp/o.json" >"$tmp/o.log" 2>&1
		v=$(verdict_of "$tmp/o.json")
		if [ "$v" = ok ]; then echo "PASS bank_opencl/$name"; else
			echo "FAIL bank_opencl/$name: got '${v:-none}': $(tail -c 400 "$tmp/o.log" | tr '\n' ' ')"; fi
	else
		echo "FAIL bank_opencl/$name: no solutions/opencl.c"
	fi
	if [ -f "$t/solutions/cuda.cu" ]; then
		"$KA" grade --task "$t" --target cuda --kernel "$t/solutions/cuda.cu" \
			--record-only tests/data/cuda/h200_device.json --workdir "$tmp/w" --json "$tmp/c.json" >"$tmp/c.log" 2>&1
		v=$(verdict_of "$tmp/c.json")
		if [ "$v" = ok ]; then echo "PASS bank_cuda_record/$name"; else
			echo "FAIL bank_cuda_record/$name: got '${v:-none}': $(tail -c 400 "$tmp/c.log" | tr '\n' ' ')"; fi
	else
		echo "FAIL bank_cuda_record/$name: no solutions/cuda.cu"
	fi
done
