#!/usr/bin/env bash
# Durability of a track run (issue 12, item 8), with a cmd: model that counts
# its requests in a file:
#  - bank errors before any request: a ref.c that does not compile makes the
#    track and `ka grade` exit 2 with one line naming the file, and no request
#    is sent; a --bench-shape its items do not cover is exit 2 as well;
#  - out of space: on a small tmpfs with less free space than the floor, the
#    run stops with exit 1 and one line, sends nothing; with the space back
#    the same command completes, each request sent once;
#  - the OpenCL runner's cache disk full during a grade: a grader failure,
#    never the next candidate's compile_error;
#  - SIGTERM is a clean stop (exit 143), the journal passes SQLite's
#    integrity check, and the same command completes with no request sent
#    twice.
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
if [ ! -x "$BUILD/ka-run-opencl" ] || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP durable_run: no OpenCL runner or platform"
	exit 0
fi
tmp=$(mktemp -d)
mnt=
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	umount "$tmp/pmnt" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
export KA_CACHE=$tmp/cache
TASK=gelu_bias_scale
. tests/e2e/lib/kill_helper.sh
mkdir -p "$tmp/bank/L1" "$tmp/badbank/L1"
cp -r "bank/public/L1/$TASK" "$tmp/bank/L1/"
cp -r "bank/public/L1/$TASK" "$tmp/badbank/L1/"
echo 'this is not C;' >"$tmp/badbank/L1/$TASK/ref.c"
# The model: counts each request, sleeps $SLEEP, answers with the solution.
cat >"$tmp/model.sh" <<MODEL
#!/bin/sh
cat >/dev/null
echo "\$KA_MODEL_TASK/\$KA_MODEL_SAMPLE" >>"$tmp/requests"
sleep \${SLEEP:-0}
printf 'Here:\n\`\`\`c\n'
cat "$PWD/bank/public/L1/$TASK/solutions/opencl.c"
printf '\`\`\`\n'
MODEL
nreq() { [ -f "$tmp/requests" ] && wc -l <"$tmp/requests" | tr -d ' ' || echo 0; }
run() { # out-dir bank k extra...
	local out=$1 bank=$2 k=$3
	shift 3
	"$KA" --track capability --api-model "cmd:sh $tmp/model.sh" --bank "$bank" --k "$k" \
		--target opencl --no-timing --concurrency 1 --quiet --out "$out" "$@" \
		>"$tmp/stdout" 2>"$tmp/stderr"
}
result() { # name got want
	if [ "$2" = "$3" ]; then echo "PASS durable_run/$1"; else
		echo "FAIL durable_run/$1: got '$2', want '$3': $(head -c 300 "$tmp/stderr" | tr '\n' ' ')"
	fi
}

# 1. Bank errors: exit 2, one line naming ref.c, no request.
run "$tmp/o1" "$tmp/badbank" 2
result bank_track "$? $(wc -l <"$tmp/stderr" | tr -d ' ') $(grep -c "$TASK/ref.c" "$tmp/stderr") $(nreq)" "2 1 1 0"
"$KA" grade --task "$tmp/badbank/L1/$TASK" --kernel "bank/public/L1/$TASK/solutions/opencl.c" \
	--workdir "$tmp/w" >"$tmp/stdout" 2>"$tmp/stderr"
result bank_grade "$? $(wc -l <"$tmp/stderr" | tr -d ' ') $(grep -c "$TASK/ref.c" "$tmp/stderr")" "2 1 1"
"$KA" grade --task tests/data/tasks_good/row_dot --kernel tests/data/grade_dtypes/row_dot.c \
	--bench-shape B=2,M=3,K=0 --workdir "$tmp/w" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
result bench_shape_checked "$rc $(wc -l <"$tmp/stderr" | tr -d ' ')" "2 1"

# 2. Out of space on a small tmpfs.
mkdir -p "$tmp/mnt"
if mount -t tmpfs -o size=24m tmpfs "$tmp/mnt" 2>/dev/null; then
	mnt=$tmp/mnt
	dd if=/dev/zero of="$mnt/filler" bs=1M count=18 2>/dev/null
	KA_SPACE_FLOOR_MB=8 run "$mnt/out" "$tmp/bank" 2
	result space_stop "$? $(wc -l <"$tmp/stderr" | tr -d ' ') $(grep -c 'out of space' "$tmp/stderr") $(nreq)" "1 1 1 0"
	rm -f "$mnt/filler"
	KA_SPACE_FLOOR_MB=8 run "$mnt/out" "$tmp/bank" 2
	result space_resume "$? $(nreq) $(sort "$tmp/requests" | uniq -d | wc -l | tr -d ' ')" "0 2 0"
else
	echo "SKIP durable_run/space: cannot mount a tmpfs here"
fi
rm -f "$tmp/requests"

# 2b. The OpenCL runner's cache disk fills during a grade (PoCL writes every
#     program it builds to the session's private cache, workdir/pocl-*): the
#     next candidate's failed build is a grader failure (exit 1, one line
#     naming the folder), never its compile_error; with the space back the
#     same candidate grades ok. The first candidate keeps the grade busy
#     (its host code loops until the 10 s record timeout) while the disk is
#     filled, once the runner has built its generator there and both host
#     objects are compiled (the second from an earlier grade).
mkdir -p "$tmp/pmnt"
if mount -t tmpfs -o size=32m tmpfs "$tmp/pmnt" 2>/dev/null; then
	pmnt=$tmp/pmnt
	L1=bank/public/L1/$TASK
	"$KA" grade --task "$L1" --target opencl --no-timing --kernel tests/data/grade_opencl/correct.c \
		--workdir "$pmnt/work" >/dev/null 2>&1
	"$KA" grade --task "$L1" --target opencl --no-timing \
		--kernel tests/data/grade_opencl/host_loops_forever.c --kernel tests/data/grade_opencl/correct.c \
		--workdir "$pmnt/work" --json "$tmp/pocl.jsonl" >"$tmp/pocl.log" 2>&1 &
	pid=$!
	# the runner's generator is built (PoCL's program.bc) once it said hello
	for _ in $(seq 300); do
		[ -n "$(find "$pmnt/work" -path '*/pocl-*/*' -name program.bc 2>/dev/null | head -1)" ] &&
			[ "$(find "$pmnt/work" -path '*/cl-*' -name candidate.so | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	dd if=/dev/zero of="$pmnt/filler" bs=1M count=64 2>/dev/null
	wait $pid
	rc=$?
	stored=$(grep -c compile_error "$tmp/pocl.jsonl" 2>/dev/null)
	result runner_cache_full "$rc $(grep -c "cache folder $pmnt/work/pocl-" "$tmp/pocl.log") ${stored:-0}" "1 1 0" "$tmp/pocl.log"
	rm -f "$pmnt/filler"
	"$KA" grade --task "$L1" --target opencl --no-timing \
		--kernel tests/data/grade_opencl/correct.c --workdir "$pmnt/work" --json "$tmp/pocl2.json" \
		>"$tmp/pocl2.log" 2>&1
	result runner_cache_resume "$? $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$tmp/pocl2.json" 2>/dev/null)" "0 ok"
	umount "$pmnt" 2>/dev/null
else
	echo "SKIP durable_run/runner_cache: cannot mount a tmpfs here"
fi

# 3. SIGTERM during the second request: a clean stop, then a full resume.
SLEEP=1 "$KA" --track capability --api-model "cmd:sh $tmp/model.sh" --bank "$tmp/bank" --k 3 \
	--target opencl --no-timing --concurrency 1 --quiet --out "$tmp/o3" \
	>"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
for _ in $(seq 200); do [ "$(nreq)" -ge 2 ] && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
rc=$?
integ=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' "$tmp/o3/journal.sqlite")
result sigterm_stop "$rc $integ" "143 ok"
run "$tmp/o3" "$tmp/bank" 3
result sigterm_resume "$? $(nreq) $(sort "$tmp/requests" | uniq -d | wc -l | tr -d ' ')" "0 3 0"

# 3b. A stop that reaches more than ka, during a timed grade (each grade times
#     for about 2 s, so one is under way when the signal comes):
#  - SIGINT to the whole process group, as Ctrl-C in a terminal sends it:
#    the helpers ignore it, so the grade under way finishes ok and is
#    journaled, and the run stops (exit 130);
#  - SIGTERM to ka, then SIGKILL to its runner (a stop that reached a helper
#    anyway): no evidence about the candidate, so the grade under way runs
#    again on a fresh runner (3c), finishes ok and is journaled; the run
#    stops (143). (A failure after a stop is not journaled either:
#    test_sampler's test_grade_stands.)
#  Either way every journaled verdict is ok, and the same command completes
#  the run with every verdict ok and no request sent twice.
rm -f "$tmp/requests"
TIMED=(--track capability --api-model "cmd:sh $tmp/model.sh" --bank "$tmp/bank" --k 3
	--target opencl --max-seconds 2 --min-samples 400 --max-samples 500 --concurrency 1 --quiet)
verdicts() { # journal: the verdicts, sorted, joined by commas
	python3 -c 'import sqlite3, sys
print(",".join(sorted(v for (v,) in sqlite3.connect(sys.argv[1]).execute("SELECT verdict FROM grades"))))' "$1"
}
under_way() { # out: until one grade is journaled and the next one has run 1 s
	for _ in $(seq 600); do
		[ -f "$tmp/$1/journal.sqlite" ] &&
			[ "$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM grades").fetchone()[0])' "$tmp/$1/journal.sqlite" 2>/dev/null)" -ge 1 ] && break
		sleep 0.1
	done
	sleep 1
}
for how in group_sigint runner_killed; do
	rm -f "$tmp/requests"
	# setsid: ka leads its own group (a script's background job has none)
	setsid "$KA" "${TIMED[@]}" --out "$tmp/o3$how" >"$tmp/stdout" 2>"$tmp/stderr" &
	pid=$!
	under_way "o3$how"
	if [ "$how" = group_sigint ]; then
		kill -INT -- "-$pid"
		want=130
	else
		runner=
		for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
			[ "$(cat /proc/"$c"/comm 2>/dev/null)" = ka-run-opencl ] && runner=$c
		done
		kill -TERM "$pid"
		sleep 0.2
		[ -n "$runner" ] && kill -KILL "$runner"
		want=143
	fi
	wait "$pid"
	rc=$?
	v=$(verdicts "$tmp/o3$how/journal.sqlite")
	# the grade under way finished and was journaled, ok
	result "${how}_stop" "$rc $v" "$want ok,ok"
	"$KA" "${TIMED[@]}" --out "$tmp/o3$how" >"$tmp/stdout" 2>"$tmp/stderr"
	result "${how}_resume" "$? $(verdicts "$tmp/o3$how/journal.sqlite") $(sort "$tmp/requests" | uniq -d | wc -l | tr -d ' ')" "0 ok,ok,ok 0"
done

# 3c. The runner killed by a SIGKILL that ka did not send (the OOM killer
#     under the machine's load, a person) during a timed grade: no evidence
#     about the candidate, who cannot send it; the candidate is graded once
#     more on a fresh runner: ok, with "regraded" saying why.
# The kill comes once the runner has begun timing: its per-call profile
# (KA_RUNNER_PROFILE, forwarded by KA_RUNNER_LOG) shows a timed call's
# flush, where correctness calls have none (before, a fixed 2 s, which on
# a slow machine landed in a load: compile_error).
KA_RUNNER_PROFILE=1 KA_RUNNER_LOG=1 setsid "$KA" grade --task "bank/public/L1/$TASK" --target opencl \
	--kernel "bank/public/L1/$TASK/solutions/opencl.c" --max-seconds 3 --min-samples 400 --max-samples 500 \
	--workdir "$tmp/w3c" --json "$tmp/3c.json" >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
for _ in $(seq 600); do
	grep -Eq 'flush ([1-9]|0\.[0-9]*[1-9])' "$tmp/stderr" 2>/dev/null && break
	sleep 0.05
done
kill_helper "$pid" ka-run-opencl 0 30 >/dev/null
wait "$pid"
# The kill lands in the candidate's call (runtime_fault) or in a
# baseline's (a grader failure), as the timing interleaves them.
result runner_sigkill_regraded "$? $(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
g = r["regraded"] or ""
print(r["verdict"], "SIGKILL" in g, "runtime_fault" in g or "grader failure" in g)' "$tmp/3c.json" 2>/dev/null)" "0 ok True True"

# 3d. The same for the recorder, which runs the candidate's host code: a
#     candidate that spins a while in ka_launch (every shape's recording),
#     whose recorder is SIGKILLed once from outside. The first grade's
#     runtime_fault ("host code crashed: SIGKILL") may be the OOM killer's
#     doing, so the candidate is graded once more, and that grade stands:
#     ok. Before, the runtime_fault was the verdict.
python3 - "bank/public/L1/$TASK/solutions/opencl.c" "$tmp/spin.c" <<'PY'
import sys
s = open(sys.argv[1]).read()
head = "cl_command_queue queue)\n{\n"
assert head in s
open(sys.argv[2], "w").write(s.replace(head, head + "\tfor (volatile long i = 0; i < 1500000000L; i++)\n\t\t;\n"))
PY
"$KA" grade --task "bank/public/L1/$TASK" --target opencl --kernel "$tmp/spin.c" --no-timing \
	--workdir "$tmp/w3d" --json "$tmp/3d.json" >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
killed=$(kill_helper "$pid" ka-record-openc 300 120)
wait "$pid"
result recorder_sigkill_regraded "$? ${killed:+killed} $(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["verdict"], "host code crashed: SIGKILL" in (r["regraded"] or ""))' "$tmp/3d.json" 2>/dev/null)" "0 killed ok True"

# 4. NUL bytes and replies over the cap: the sample's outcome, recorded once
#    (no_code with the evidence), never requested again.
rm -f "$tmp/requests"
cat >"$tmp/odd.sh" <<MODEL
#!/bin/sh
cat >/dev/null
echo "\$KA_MODEL_TASK/\$KA_MODEL_SAMPLE" >>"$tmp/requests"
if [ "\$KA_MODEL_SAMPLE" = 0 ]; then printf 'abc\\000\\000def'; else head -c 5000000 /dev/zero | tr '\\000' a; fi
MODEL
odd() {
	"$KA" --track capability --api-model "cmd:sh $tmp/odd.sh" --bank "$tmp/bank" --k 2 \
		--target opencl --no-timing --concurrency 1 --quiet --out "$tmp/o4" \
		>"$tmp/stdout" 2>"$tmp/stderr"
}
odd
rc=$?
details=$(python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print("|".join(v + ":" + d for v, d in c.execute("SELECT verdict, detail FROM grades ORDER BY sample")))' "$tmp/o4/journal.sqlite")
result odd_replies "$rc $details" "0 no_code:cmd: reply holds NUL bytes at offset 3|no_code:cmd: reply over the cap of 4194304 bytes"
odd
result odd_replies_once "$? $(nreq)" "0 2"

# 5. Stale temporary files of killed runs are removed at start: in the run's
#    own out/.grade any partial file (and runner cache, pocl-*) older than
#    the start; in shared places
#    (the gold cache, $TMPDIR) only those over an hour old, so another ka's
#    live build is kept.
export TMPDIR=$tmp/tmpdir
mkdir -p "$TMPDIR" "$KA_CACHE/gold/build-old1" "$KA_CACHE/gold/build-live" \
	"$TMPDIR/ka-rec-old1" "$TMPDIR/ka-rec-live" "$tmp/o3/.grade/0/cl-x" "$tmp/o3/.grade/0/pocl-old"
touch -d '2 hours ago' "$KA_CACHE/gold/build-old1" "$TMPDIR/ka-rec-old1"
touch -d '1 minute ago' "$tmp/o3/.grade/0/pocl-old"
touch "$tmp/o3/.grade/0/cl-x/candidate.so.part-candidate.s"
touch -d '1 minute ago' "$tmp/o3/.grade/0/cl-x/candidate.so.part-candidate.s"
run "$tmp/o3" "$tmp/bank" 3
rc=$?
left=$(for f in "$KA_CACHE/gold/build-old1" "$KA_CACHE/gold/build-live" "$TMPDIR/ka-rec-old1" \
	"$TMPDIR/ka-rec-live" "$tmp/o3/.grade/0/cl-x/candidate.so.part-candidate.s" \
	"$tmp/o3/.grade/0/pocl-old"; do
	[ -e "$f" ] && echo -n "1" || echo -n "0"
done)
result stale_temps "$rc $left" "0 010100"
