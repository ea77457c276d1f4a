#!/usr/bin/env bash
# `ka grade --graders N` (issue 21): several candidates graded at once, each
# by its own grade session on the same device, behind the device lock
# (docs/grader.md, "Several graders on one device"). On PoCL: 6 copies of the
# row_sum solution and one wrong variant, graded by 3 graders with the full
# protocol; every kernel gets exactly one result line, the wrong one
# wrong_answer and the others ok, each line reports seconds.device_wait, and
# --profile prints where the time went. Bad --graders values are usage errors.
# The timed calls are phased (docs/grader.md, "Phased timed calls"): from the
# trace of every runner request (KA_CALL_TRACE), no timed call's flush and
# replay overlaps anything another runner did (calls, loads, checks), and
# other graders' correctness calls did run during timed calls' preparation
# or read back.
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! [ -x "$BUILD/ka-run-opencl" ] || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP grade_graders: no OpenCL runner or platform"
	exit 0
fi
T=bank/public/L1/row_sum
args=()
for i in 1 2 3 4 5 6; do
	sed "1i // candidate $i" $T/solutions/opencl.c >"$tmp/c$i.c"
	args+=(--kernel "$tmp/c$i.c")
done
sed 's/y\[r\] = (((s\[0\]/y[r] = 1.0f + (((s[0]/' $T/solutions/opencl.c >"$tmp/wrong.c"
args+=(--kernel "$tmp/wrong.c")
KA_CALL_TRACE="$tmp/trace.jsonl" "$KA" grade --target opencl --task $T "${args[@]}" --graders 3 \
	--profile --max-seconds 0.5 --min-samples 5 --workdir "$tmp/w" --json "$tmp/out.jsonl" \
	>"$tmp/log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then echo "PASS grade_graders/exit"; else echo "FAIL grade_graders/exit: $rc: $(tail -c 600 "$tmp/log" | tr '\n' ' ')"; fi
python3 - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
rows = [json.loads(l) for l in open(os.path.join(tmp, "out.jsonl"))]
kernels = sorted(os.path.basename(r["kernel"]) for r in rows)
want = sorted(["c%d.c" % i for i in range(1, 7)] + ["wrong.c"])
print("PASS grade_graders/one_line_per_kernel" if kernels == want else
      "FAIL grade_graders/one_line_per_kernel: got %s, want %s" % (kernels, want))
bad = [(os.path.basename(r["kernel"]), r["verdict"]) for r in rows
       if r["verdict"] != ("wrong_answer" if r["kernel"].endswith("wrong.c") else "ok")]
print("PASS grade_graders/verdicts" if not bad else "FAIL grade_graders/verdicts: %s" % bad)
waits = [r["seconds"].get("device_wait") for r in rows]
print("PASS grade_graders/device_wait" if all(isinstance(w, float) and w >= 0 for w in waits) else
      "FAIL grade_graders/device_wait: %s" % waits)
timed = [r for r in rows if r["verdict"] == "ok"]
print("PASS grade_graders/timed" if all(r["time_us"] and r["speedup_eager"] for r in timed) else
      "FAIL grade_graders/timed: an ok result without timing")
# The trace: what each runner did on the device lies within its requests'
# intervals; a timed call has the device alone only for its flush and
# replay, [go, replayed] when phased, [start, reply] otherwise.
tr = [json.loads(l) for l in open(os.path.join(tmp, "trace.jsonl"))]
def activity(r):
    if r["op"] == "call" and r["phased"]:
        iv = [(r["start"], r["ready"] or r["reply"])]
        return iv + [(r["go"], r["reply"])] if r["go"] else iv
    return [(r["start"], r["reply"])]
def alone(r):
    if r["op"] != "call" or not r["timed"]:
        return None
    if r["phased"]:
        return (r["go"], r["replayed"] or r["reply"]) if r["go"] else None
    return (r["start"], r["reply"])
def meets(a, b):
    return a[0] < b[1] and b[0] < a[1]
phased = [r for r in tr if r["phased"]]
bad, shared = [], 0
for i, a in enumerate(tr):
    sec = alone(a)
    if sec:
        for j, b in enumerate(tr):
            if j != i and any(meets(sec, iv) for iv in activity(b)):
                bad.append((a, b))
    if a["phased"] and a["ready"] and a["replayed"]:
        own = [(a["start"], a["ready"]), (a["replayed"], a["reply"])]
        shared += any(b["op"] == "call" and not b["timed"] and b["runner"] != a["runner"] and
                      any(meets(o, (b["start"], b["reply"])) for o in own) for b in tr)
ok = phased and all(r["ready"] and r["go"] and r["replayed"] for r in phased)
print("PASS grade_graders/phased" if ok else
      "FAIL grade_graders/phased: %d phased of %d requests" % (len(phased), len(tr)))
print("PASS grade_graders/timed_alone" if not bad else
      "FAIL grade_graders/timed_alone: %d overlaps, first %s" % (len(bad), bad[:1]))
print("PASS grade_graders/shared_beside_timed" if shared else
      "FAIL grade_graders/shared_beside_timed: no correctness call ran during a timed "
      "call's preparation or read back")
PY
if grep -q "^graded    7 candidates .*(3 grader(s))" "$tmp/log" && grep -q "waiting for another grader" "$tmp/log"; then
	echo "PASS grade_graders/profile"
else
	echo "FAIL grade_graders/profile: $(grep -A12 '^graded' "$tmp/log" | tr '\n' '|')"
fi
for bad in 0 33 x; do
	"$KA" grade --target opencl --task $T --kernel "$tmp/c1.c" --graders $bad >"$tmp/bad" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "--graders" "$tmp/bad"; then
		echo "PASS grade_graders/bad_$bad"
	else
		echo "FAIL grade_graders/bad_$bad: exit $rc: $(cat "$tmp/bad")"
	fi
done
