# tiny_trainee.sh: sourced by the e2e scripts of the tracks that train an
# open model on the CPU (track_rsi.sh, track_harness.sh). Needs $PY, $tmp
# and the scripts' pass, fail and expect (kill_and_resume: RUN and OUT too).

# The bank of four L1 tasks in $tmp/bank (sets BANK) and the tiny
# Llama-shaped model of tools/make_tiny_model.py, pretrained on their OpenCL
# solutions, in $tmp/tiny. A FAIL line and the script's end when the model
# cannot be made.
tiny_setup() {
	BANK=$tmp/bank
	mkdir -p "$BANK/L1"
	for t in row_max row_sum mish softplus; do cp -r bank/public/L1/$t "$BANK/L1/"; done
	cp -r bank/lib "$BANK/lib"
	local t0
	t0=$(date +%s)
	if "$PY" tools/make_tiny_model.py --bank "$BANK" --out "$tmp/tiny" --steps 150 >"$tmp/make.log" 2>&1 &&
		[ -f "$tmp/tiny/config.json" ]; then
		pass "make_tiny_model ($(($(date +%s) - t0))s: $(tail -1 "$tmp/make.log" | cut -c1-100))"
	else
		fail make_tiny_model "$(tail -3 "$tmp/make.log" | tr '\n' ' ')"
		exit 0
	fi
}

# kill_in_call PID OUT CALL: wait until the engine call CALL (the file
# name of its key, e.g. r1_self_train) has written its manifest in
# OUT/engine, then kill -9 PID (a child of the script) while the call runs,
# and reap it. Sets killed to 1 when it was killed inside the call, else 0
# (it ended or finished first). Not in a subshell: wait needs the child.
kill_in_call() {
	local pid=$1 out=$2 call=$3
	killed=0
	for _ in $(seq 1 1500); do
		if [ -f "$out/engine/$call.manifest.json" ]; then
			sleep 1
			if [ ! -f "$out/engine/$call.result.json" ] && kill -9 "$pid" 2>/dev/null; then
				killed=1
			fi
			break
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	wait "$pid" 2>/dev/null
}

# kill_and_resume ARM: (a) of the tracks' tests. Starts "${RUN[@]}" (the
# script's run, output folder $OUT), kills it with kill -9 inside round 1's
# train call of ARM, checks that the call left no finished model, then runs
# the same command again: it exits 0, does not redo round 0's journaled
# sample call and redoes the killed train call. Its output is $tmp/run2.out.
kill_and_resume() {
	local arm=$1 rc
	"${RUN[@]}" >"$tmp/run1.out" 2>&1 &
	kapid=$!
	kill_in_call "$kapid" "$OUT" "r1_${arm}_train"
	kapid=
	expect "kill -9 inside the r1 $arm train call" "$killed" 1
	[ -d "$OUT/models/$arm/r1" ] && fail "killed train left no finished output" "models/$arm/r1 exists" ||
		pass "killed train left no finished output"
	"${RUN[@]}" >"$tmp/run2.out" 2>&1
	rc=$?
	expect "resumed run exits 0" "$rc" 0
	[ "$rc" = 0 ] || cat "$tmp/run1.out" "$tmp/run2.out" | tail -20
	grep -q "r0/base/sample: journaled" "$tmp/run2.out" && pass "round-0 sample call not redone" ||
		fail "round-0 sample call not redone" "$(grep r0/base "$tmp/run2.out")"
	grep -q "r1/$arm/train: trained" "$tmp/run2.out" && pass "killed train call redone" ||
		fail "killed train call redone" "$(grep "r1/$arm/train" "$tmp/run2.out")"
}
