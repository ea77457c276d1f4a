#!/usr/bin/env bash
# The call pipeline (docs/grader.md, "Call-level overlap": the parent checks
# call k while the runner runs call k+1) gives the serial grader's verdicts.
# On PoCL, each with --pipeline on and off:
#  - late_wrong_then_crash.c: a wrong correctness call whose next call, run
#    while the parent checks the wrong one, crashes the runner: wrong_answer
#    at R=7,C=1031 (the crash's runtime_fault would mean the outcomes were
#    taken out of order);
#  - timed_wrong_then_crash.c: a timed call of the second block of samples
#    is wrong and every call after it crashes: wrong_answer in phase timing
#    at the benchmark shape, the evidence that of the wrong call (got
#    -12345);
#  - both graded in one session, then the correct solution: the runner that
#    the drained crash killed is restarted, the solution grades ok and its
#    result records the pipeline mode;
#  - mode on2: the same with --pipeline on and two graders, so the timed
#    calls are phased (docs/grader.md, "Phased timed calls"), plus
#    timed_crash.c (timed_wrong_then_crash.c without the wrong call: it
#    crashes from the twelfth call at the benchmark shape on, always a
#    candidate timed call), whose runner always dies in a phased timed call between
#    "go" and "replayed" (the trace shows it): runtime_fault in phase timing,
#    and the other grader and the solution after it are not held up by the
#    exclusive lock the dead call had (a second copy of the solution keeps
#    the other grader busy). Whether the wrong timed call of
#    timed_wrong_then_crash.c is drained with a crash depends on where the
#    random warm-up puts it in a block, so that is not asserted;
#  - mode ahead: --pipeline on with the gold ahead forced (KA_GOLD_AHEAD=1:
#    each shape's first correctness call built and its CPU half computed
#    while the candidate compiles, docs/grader.md "The gold ahead"), plus a
#    candidate that does not compile: the same verdicts, phases, shapes and
#    evidence, compile_error for the broken one, and the solution's result
#    says the ahead thread ran (seconds.ahead > 0; 0 in the other modes).
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/ka-run-opencl" ] || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP grade_pipeline: no OpenCL runner or platform"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
T=bank/public/L1/gelu_bias_scale
D=tests/data/grade_opencl
sed -e '/if (c == 11) r = -12345.0f;/d' -e 's/c >= 12/c >= 11/' $D/timed_wrong_then_crash.c >"$tmp/timed_crash.c"
if grep -q 'c == 11' "$tmp/timed_crash.c" || ! grep -q 'c >= 11' "$tmp/timed_crash.c"; then
	echo "FAIL grade_pipeline/timed_crash_source: the edits of timed_wrong_then_crash.c did not apply"
fi
printf 'this is not OpenCL C {\n' >"$tmp/broken.c"
for mode in on off on2 ahead; do
	extra=()
	pl=${mode%2} ahead=0
	[ $mode = on2 ] && extra=(--graders 2 --kernel "$tmp/timed_crash.c" --kernel $T/solutions/opencl.c)
	[ "$mode" = ahead ] && pl=on ahead=1 extra=(--kernel "$tmp/broken.c")
	KA_GOLD_AHEAD=$ahead KA_CALL_TRACE="$tmp/$mode.trace" "$KA" grade --task $T --target opencl --pipeline "$pl" --kernel $D/late_wrong_then_crash.c \
		--kernel $D/timed_wrong_then_crash.c --kernel $T/solutions/opencl.c "${extra[@]}" \
		--max-seconds 10 --workdir "$tmp/w" --json "$tmp/$mode.jsonl" >"$tmp/$mode.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "PASS grade_pipeline/exit_$mode"
	else
		echo "FAIL grade_pipeline/exit_$mode: $rc: $(tail -c 600 "$tmp/$mode.log" | tr '\n' ' ')"
	fi
	python3 - "$tmp/$mode.jsonl" "$mode" <<'PY'
import json, sys
mode = sys.argv[2]
rows = {}
for r in map(json.loads, open(sys.argv[1])):
    k = r["kernel"].rsplit("/", 1)[-1]
    if k in rows and r.get("verdict") == "ok":
        continue  # of the copies of the solution, one that did not grade ok
    rows[k] = r
def check(name, ok, got):
    print(("PASS grade_pipeline/%s_%s" % (name, mode)) if ok else
          ("FAIL grade_pipeline/%s_%s: %s" % (name, mode, got)))
def got_first(r):
    m = (r.get("evidence") or {}).get("mismatches") or [{}]
    return m[0].get("got")
r = rows.get("late_wrong_then_crash.c", {})
check("correctness_order",
      (r.get("verdict"), r.get("phase"), r.get("shape"), got_first(r)) ==
      ("wrong_answer", "correctness", "R=7,C=1031", -12345.0),
      (r.get("verdict"), r.get("phase"), r.get("shape"), r.get("detail")))
r = rows.get("timed_wrong_then_crash.c", {})
check("timed_order",
      (r.get("verdict"), r.get("phase"), r.get("shape"), got_first(r)) ==
      ("wrong_answer", "timing", r.get("bench_shape"), -12345.0),
      (r.get("verdict"), r.get("phase"), r.get("shape"), r.get("detail")))
r = rows.get("opencl.c", {})
pl = "on" if mode == "ahead" else mode.rstrip("2")
check("after_crash_ok",
      r.get("verdict") == "ok" and r.get("time_us") is not None and
      r.get("protocol", {}).get("pipeline") == pl,
      (r.get("verdict"), r.get("detail"), r.get("protocol", {}).get("pipeline")))
ahead = r.get("seconds", {}).get("ahead")
check("ahead_ran", (ahead > 0) if mode == "ahead" else ahead == 0, ahead)
if mode == "ahead":
    r = rows.get("broken.c", {})
    check("broken_compile_error", (r.get("verdict"), r.get("phase")) == ("compile_error", "compile"),
          (r.get("verdict"), r.get("phase"), r.get("detail")))
if mode == "on2":
    r = rows.get("timed_crash.c", {})
    check("timed_crash",
          (r.get("verdict"), r.get("phase")) == ("runtime_fault", "timing"),
          (r.get("verdict"), r.get("phase"), r.get("detail")))
PY
	if [ $mode = on2 ]; then
		# A phased timed call whose runner died between "go" and "replayed"
		# (timed_crash.c's, at least).
		n=$(grep -c '"phased":1,.*"go":[1-9][0-9.]*,"replayed":0.000000' "$tmp/$mode.trace")
		if [ "$n" -gt 0 ]; then
			echo "PASS grade_pipeline/phased_crash_on2"
		else
			echo "FAIL grade_pipeline/phased_crash_on2: no phased call died after go"
		fi
	fi
done
"$KA" grade --task $T --kernel $T/solutions/opencl.c --pipeline sideways >"$tmp/bad" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--pipeline" "$tmp/bad"; then
	echo "PASS grade_pipeline/bad_mode"
else
	echo "FAIL grade_pipeline/bad_mode: exit $rc: $(cat "$tmp/bad")"
fi
