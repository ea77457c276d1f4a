#!/usr/bin/env bash
# GPU tier: several graders that do not fit the device's memory together
# (docs/grader.md, "Device memory"). Two graders check the L1 gelu_tanh
# solution (--no-timing) at R=262144,C=4096 (N = 2^30 elements) while a
# ballast process (torch) holds all of the card's free memory but 22 bytes
# an element and 1.5 GiB. One grader's runner needs 12 bytes an element (x,
# y, the input check's regeneration of x), 20 with the device gold in fp64,
# and under 1 GiB for its context and fixed buffers: one fits, two do not,
# whatever the card's size. The second
# to allocate runs out of device memory, takes the device's memory turn once
# the other has stopped its runner, and grades again.
#   (a) both grades are ok and ka grade exits 0 (no grader failure);
#   (b) at least one result says, in "regraded", that its first grade ran
#       out of device memory beside the other grader (the contention did
#       happen: without it the test would show nothing);
# SKIP where there is no GPU or no CUDA runner, or torch cannot hold the
# ballast.
set -u
. tests/gpu/lib/need_gpu.sh grade_memory
tmp=${KA_GPU_OUT:-$(mktemp -d)}
mkdir -p "$tmp"
rows=262144
shape="R=$rows,C=4096"
room=$((rows * 4096 * 22 + (3 << 29)))
ballast=
cleanup() { [ -n "$ballast" ] && kill "$ballast" 2>/dev/null && wait "$ballast" 2>/dev/null; }
trap cleanup EXIT
python3 - "$room" "$tmp/ballast.ready" >"$tmp/ballast.log" 2>&1 <<'PY' &
import signal, sys, torch
room, ready = int(sys.argv[1]), sys.argv[2]
free, total = torch.cuda.mem_get_info()
if free <= room:
    sys.exit("%d bytes free, under the %d the test leaves" % (free, room))
held = torch.empty(max(free - room, 0), dtype=torch.uint8, device="cuda")
free2, _ = torch.cuda.mem_get_info()
open(ready, "w").write("held %d of %d bytes, %d free\n" % (held.numel(), total, free2))
signal.pause()
PY
ballast=$!
for _ in $(seq 1 120); do
	[ -s "$tmp/ballast.ready" ] && break
	kill -0 "$ballast" 2>/dev/null || break
	sleep 0.5
done
if [ ! -s "$tmp/ballast.ready" ]; then
	echo "SKIP grade_memory: the torch ballast did not start ($(tail -c 200 "$tmp/ballast.log" | tr '\n' ' '))"
	exit 0
fi
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
	echo "PASS grade_memory/both_ok (2 graders at $shape, ballast $(cat "$tmp/ballast.ready"): $got)"
else
	echo "FAIL grade_memory/both_ok: want exit 0 and 'ok,ok', got exit $rc and '$got': $log"
fi
if [ -n "$got" ] && [ "${got#* }" -ge 1 ]; then
	echo "PASS grade_memory/regraded_in_turn (${got#* } result(s) regraded after running out of device memory)"
else
	echo "FAIL grade_memory/regraded_in_turn: no result says it ran out of device memory (got '$got'): $log"
fi
