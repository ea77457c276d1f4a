#!/usr/bin/env bash
# record_cuda.sh: the CUDA recorder program as the parent sees it: every API
# name the parent treats as provided is really exported (--exports), --help
# works, and a bad request is a "harness" line with exit 2, not a crash. The
# fixtures themselves (tests/data/cuda/*.cu, compile + record, expected
# verdicts and plans) run in tests/unit/test_record_cuda.c, which needs cudac.
set -u
BUILD=${BUILD:-build}
rec="$BUILD/ka-record-cuda"
if [ ! -x "$rec" ]; then
	echo "SKIP record_cuda: $rec not built"
	exit 0
fi
if out=$("$rec" --exports 2>&1) && ! grep -q MISSING <<<"$out" && grep -q '^__cudaLaunchKernel$' <<<"$out"; then
	echo "PASS record_cuda_exports"
else
	echo "FAIL record_cuda_exports: $(grep MISSING <<<"$out" | head -3 | tr '\n' ' ')"
fi
if "$rec" --help | grep -q 'usage: ka-record-cuda'; then
	echo "PASS record_cuda_help"
else
	echo "FAIL record_cuda_help: no usage line"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/so" && : >"$tmp/so/candidate.so"
cases=(
	'not json|not JSON'
	'{"target":"opencl","n_inputs":0,"tensors":[{"name":"x","ndim":1,"shape":[1],"dtype":0,"numel":1,"bytes":4}]}|this recorder records'
	'{"target":"cuda","n_inputs":0,"tensors":[{"name":"x","ndim":1,"shape":[1],"dtype":0,"numel":1,"bytes":4}],"device":{"kernels":[{"name":"k","params":[{"offset":-1,"size":8}]}]}}|bad offset'
)
i=0
for c in "${cases[@]}"; do
	i=$((i + 1))
	req=${c%%|*} want=${c#*|}
	printf '%s' "$req" >"$tmp/req.json"
	out=$("$rec" --so "$tmp/so/candidate.so" --request "$tmp/req.json" 2>/dev/null)
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q "^harness .*$want" <<<"$out"; then
		echo "PASS record_cuda_bad_request_$i"
	else
		echo "FAIL record_cuda_bad_request_$i: exit $rc, output: $(head -c 200 <<<"$out")"
	fi
done
