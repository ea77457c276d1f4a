#!/usr/bin/env bash
# ref_numpy.sh: each task's ref.c against an independent fp64 NumPy
# evaluation of its PyTorch expression (tools/ref_numpy.py), at the task's
# check shapes: relative error at most 1e-12. Then a mutated copy of a
# reference (fp32 accumulation in the GEMM) must FAIL, which shows the check
# can fail. Installs NumPy with pip when it is missing.
set -u
cd "${KA_HOME:-$(dirname "$0")/../..}"
if ! command -v python3 >/dev/null; then
	echo "FAIL ref_numpy: python3 is missing (tools/setup.sh installs it)"
	exit 1
fi
if ! python3 -c 'import numpy' 2>/dev/null; then
	python3 -m pip install -q numpy >/dev/null 2>&1 ||
		python3 -m pip install -q --break-system-packages numpy >/dev/null 2>&1
fi
if ! python3 -c 'import numpy' 2>/dev/null; then
	echo "FAIL ref_numpy: NumPy is missing and pip could not install it"
	exit 1
fi
tasks=()
for d in bank/public/*/*/ tests/data/tasks_index/*/; do
	[ -f "$d/task.json" ] && tasks+=("${d%/}")
done
python3 tools/ref_numpy.py "${tasks[@]}"
rc=$?

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r bank/public/L2/gemm_bias_gelu "$tmp/fp32_accumulation"
sed -i 's/double acc = 0.0;/float acc = 0.0f;/' "$tmp/fp32_accumulation/ref.c"
if cmp -s "$tmp/fp32_accumulation/ref.c" bank/public/L2/gemm_bias_gelu/ref.c; then
	echo "FAIL ref_numpy_mutant: the mutation no longer applies to gemm_bias_gelu/ref.c"
	rc=1
elif python3 tools/ref_numpy.py --include include "$tmp/fp32_accumulation" | grep -q '^FAIL ref_numpy fp32_accumulation: .*relative error'; then
	echo "PASS ref_numpy_mutant (fp32 accumulation is caught)"
else
	echo "FAIL ref_numpy_mutant: a reference with fp32 accumulation was not caught"
	rc=1
fi
# A model-written task (lineage.json, docs/frontier.md) is not run here.
cp -r bank/public/L1/silu_scale "$tmp/model_written"
echo '{"parent": "silu_scale"}' >"$tmp/model_written/lineage.json"
if python3 tools/ref_numpy.py --include include "$tmp/model_written" | grep -q '^FAIL ref_numpy model_written: .*lineage.json'; then
	echo "PASS ref_numpy_model_written (not run outside ka-goldbox)"
else
	echo "FAIL ref_numpy_model_written: a model-written ref.c was run"
	rc=1
fi
exit $rc
