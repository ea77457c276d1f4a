#!/usr/bin/env bash
# GPU tier: several graders that do not fit the device's memory together
# (docs/grader.md, "Device memory"). Two graders check the L1 gelu_tanh
# solution (--no-timing: no baselines, whose eager workspace at this size
# is over the plan's cap) at a benchmark shape sized so that one grader's
# device buffers (x and y with their canaries, the device gold in fp64, the
# input check's regeneration: about 20 bytes an element) take about 58% of
# the card, and no tensor is over 15 GiB: the second to allocate runs out
# of device memory, takes the device's memory turn once the other has
# stopped its runner, and grades again. The parent holds about 12 bytes an
# element a grader in host memory (the inputs and the gold).
#   (a) both grades are ok and ka grade exits 0 (no grader failure);
#   (b) at least one result says, in "regraded", that its first grade ran
#       out of device memory beside the other grader (the contention did
#       happen: without it the test would show nothing);
# SKIP where there is no GPU or no CUDA runner.
set -u
. tests/gpu/lib/need_gpu.sh grade_memory
tmp=${KA_GPU_OUT:-$(mktemp -d)}
mkdir -p "$tmp"
mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 2>/dev/null | head -1 | tr -dc 0-9)
if [ -z "$mib" ] || [ "$mib" -lt 8000 ]; then
	echo "SKIP grade_memory: no memory size from nvidia-smi (got '$mib')"
	exit 0
fi
# Rows of 4096 fp32 so that one grader needs about 58% of the card, x at
# most 15 GiB.
rows=$(((mib * 1048576 * 58 / 100) / 20 / 4096))
cap=$(((15 << 30) / 4 / 4096))
[ "$rows" -gt "$cap" ] && rows=$cap
shape="R=$rows,C=4096"
sol=bank/public/L1/gelu_tanh/solutions/cuda.cu
"$KA" grade --target cuda --task bank/public/L1/gelu_tanh --kernel "$sol" --kernel "$sol" \
	--graders 2 --bench-shape "$shape" --no-timing --workdir "$tmp/work" \
	--json "$tmp/memory.jsonl" >"$tmp/memory.log" 2>&1
rc=$?
got=$(python3 - "$tmp/memory.jsonl" <<'PY' 2>/dev/null
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
v = ",".join(r["verdict"] for r in rs)
oom = sum(1 for r in rs if "ran out of device memory" in (r.get("regraded") or ""))
print("%s %d" % (v, oom))
PY
)
log=$(tail -c 800 "$tmp/memory.log" | tr '\n' ' ')
if [ "$rc" -eq 0 ] && [ "${got% *}" = "ok,ok" ]; then
	echo "PASS grade_memory/both_ok (2 graders at $shape on $mib MiB: $got)"
else
	echo "FAIL grade_memory/both_ok: want exit 0 and 'ok,ok', got exit $rc and '$got': $log"
fi
if [ -n "$got" ] && [ "${got#* }" -ge 1 ]; then
	echo "PASS grade_memory/regraded_in_turn (${got#* } result(s) regraded after running out of device memory)"
else
	echo "FAIL grade_memory/regraded_in_turn: no result says it ran out of device memory (got '$got'): $log"
fi
