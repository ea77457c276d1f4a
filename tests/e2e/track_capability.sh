#!/usr/bin/env bash
# track_capability.sh: `ka --track capability` end to end on PoCL, against a
# fake OpenAI-compatible server on loopback (tests/data/track/fake_openai.py)
# that answers known kernels per sample:
#   (a) a run with known replies (correct, wrong, no code, syntax error) gives
#       the known verdicts in a scorecard that `ka scorecard check` accepts;
#       the prompt the server received is exactly `ka prompt`'s; a second run
#       sends nothing and grades nothing; other arguments on the same --out
#       are refused;
#   (b) kill -9 at random points, then the same command again, several
#       times: every sample graded exactly once, no request sent after its
#       reply was journaled, the scorecard complete;
#   (c) bad input: one line, exit 2.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
srv=
cleanup() {
	exec 3>&- 2>/dev/null
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
unset OPENAI_API_KEY KA_OPENAI_API_KEY OPENAI_BASE_URL KA_PRICES
export HOME=$tmp
TASK=gelu_bias_scale
SOL=bank/public/L1/$TASK/solutions/opencl.c
# A one-task bank (the public bank's L1 tier has many tasks; the counts below
# are for one): the starter task and the baseline library beside it.
BANK1=$tmp/bank1
mkdir -p "$BANK1/L1"
cp -r bank/public/L1/$TASK "$BANK1/L1/"
cp -r bank/lib "$BANK1/lib"
KNOBS=(--bank "$BANK1" --tier L1 --target opencl --max-seconds 1 --min-samples 5 --max-samples 40)

# check NAME WANT_RC WANT_TEXT -- command...: PASS when the exit code and a
# fixed-string match of stdout+stderr both hold.
check() {
	local name=$1 want_rc=$2 want=$3
	shift 4
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	cat "$tmp/err" >>"$tmp/out"
	if [ "$rc" != "$want_rc" ]; then
		echo "FAIL $name: exit $rc, want $want_rc: $(head -c 400 "$tmp/out" | tr '\n' ' ')"
	elif ! grep -qF -- "$want" "$tmp/out"; then
		echo "FAIL $name: output lacks '$want': $(head -c 400 "$tmp/out" | tr '\n' ' ')"
	else
		echo "PASS $name"
	fi
}
# one_line NAME: stderr of the last check was exactly one line.
one_line() {
	if [ "$(wc -l <"$tmp/err")" = 1 ]; then echo "PASS $1"; else
		echo "FAIL $1: stderr has $(wc -l <"$tmp/err") lines: $(head -c 300 "$tmp/err" | tr '\n' ' ')"
	fi
}
# expect NAME ACTUAL WANTED
expect() {
	if [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1: got '$2', want '$3'"; fi
}
# sql DB QUERY: one value (python's sqlite3: no sqlite3 program needed).
sql() {
	python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
r = c.execute(sys.argv[2]).fetchall()
print("\n".join("|".join(str(x) for x in row) for row in r))' "$1" "$2"
}

# ---- (c) bad input: one line, exit 2 -------------------------------------
check track_bad_tier 2 "unknown tier 'L9'" -- "$KA" --track capability --model archive:bank/public --tier L9 --out "$tmp/bad"
one_line track_bad_tier_one_line
check track_bad_target 2 "--target must be cuda, opencl or auto, not 'vulkan'" -- "$KA" --track capability --model archive:bank/public --target vulkan --out "$tmp/bad"
one_line track_bad_target_one_line
check track_k0 2 "--k: '0' is not in 1..1000" -- "$KA" --track capability --model archive:bank/public --k 0 --out "$tmp/bad"
one_line track_k0_one_line
check track_no_model 2 "--api-model (or --model) is required" -- "$KA" --track capability --tier L1 --out "$tmp/bad"
one_line track_no_model_one_line
check track_bad_backend 2 "unknown backend 'foo'" -- "$KA" --track capability --model foo:bar --out "$tmp/bad"
one_line track_bad_backend_one_line
check track_bad_flag 2 "unknown option '--bogus'" -- "$KA" --track capability --model archive:bank/public --bogus
one_line track_bad_flag_one_line
check track_harness 2 "--researcher (a model spec) is required" -- "$KA" --track harness --trainee x --rounds 5
one_line track_harness_one_line
check track_unknown 2 "unknown track 'nope'" -- "$KA" --track nope
check track_help 0 "usage: ka --track capability --api-model SPEC" -- "$KA" --track capability --help
if [ -e "$tmp/bad" ]; then echo "FAIL track_bad_input_no_out: bad input created $tmp/bad"; else echo "PASS track_bad_input_no_out"; fi

# ---- ka prompt ------------------------------------------------------------
check prompt_cuda 0 'extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream);' -- "$KA" prompt $TASK --target cuda
grep -qF 'tagged ```cuda' "$tmp/out" && grep -qF 'double v = (double)x[item] * (double)scale[c] + (double)bias[c];' "$tmp/out" &&
	grep -qF 'struct ka_args {' "$tmp/out" && grep -qF -- '- R=7,C=1031: x [7, 1031], scale [1031], bias [1031] -> y [7, 1031]' "$tmp/out" &&
	grep -qF 'atol = 1e-06 and rtol = 1e-05' "$tmp/out" && grep -qF 'torch.nn.functional.gelu(x * scale + bias)' "$tmp/out" &&
	echo "PASS prompt_cuda_parts" || echo "FAIL prompt_cuda_parts: a part of the prompt is missing"
check prompt_opencl 0 'tagged ```c that holds the complete .c' -- "$KA" prompt bank/public/L1/$TASK --target opencl
check prompt_unknown_task 2 "no task 'nope'" -- "$KA" prompt nope
check prompt_bad_target 2 "--target must be cuda or opencl" -- "$KA" prompt $TASK --target x
printf 'Task {{task.name}} {{bogus}}\n' >"$tmp/bad.md"
check prompt_bad_template 2 "unknown placeholder '{{bogus}}'" -- "$KA" prompt $TASK --template "$tmp/bad.md"
printf '{{#cuda}}CUDA {{target}}{{/cuda}}{{#opencl}}CL {{lang}}{{/opencl}}\n' >"$tmp/sec.md"
check prompt_sections_cuda 0 "CUDA cuda" -- "$KA" prompt $TASK --template "$tmp/sec.md" --target cuda
expect prompt_sections_cuda_exact "$(cat "$tmp/out")" "CUDA cuda"
check prompt_sections_opencl 0 "CL c" -- "$KA" prompt $TASK --template "$tmp/sec.md" --target opencl
expect prompt_sections_opencl_exact "$(cat "$tmp/out")" "CL c"

if ! command -v python3 >/dev/null; then
	echo "SKIP track_fake_server: python3 not found"
	exit 0
fi
if ! "$KA" grade --help >/dev/null 2>&1; then
	echo "SKIP track_fake_server: the grader is not in this build (ka grade is missing)"
	exit 0
fi
if [ ! -x "$(dirname "$KA")/ka-run-opencl" ]; then
	echo "SKIP track_fake_server: ka-run-opencl not built (no OpenCL)"
	exit 0
fi

# start_server PLAN DELAY: the fake server, its port in $port; it exits when
# fd 3 closes.
start_server() {
	echo "$1" >"$tmp/plan.json"
	: >"$tmp/log"
	rm -f "$tmp/ctl"
	mkfifo "$tmp/ctl"
	python3 tests/data/track/fake_openai.py --bank "$BANK1" --plan "$tmp/plan.json" \
		--log "$tmp/log" --delay "$2" <"$tmp/ctl" >"$tmp/port" &
	srv=$!
	exec 3>"$tmp/ctl"
	for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
	port=$(head -1 "$tmp/port")
}
stop_server() {
	exec 3>&-
	wait "$srv" 2>/dev/null
	srv=
}

# ---- (a) known replies, known verdicts -------------------------------------
start_server '{"gelu_bias_scale": ["correct", "wrong", "nocode", "syntax"]}' 0
MODEL="openai:fake-coder@http://127.0.0.1:$port/v1"
OUT=$tmp/a
check track_fake_run 0 "scorecard: $OUT/scorecard.json" -- "$KA" --track capability --api-model "$MODEL" --k 4 --out "$OUT" "${KNOBS[@]}"
grep -q "correct   0.250" "$tmp/out" && echo "PASS track_fake_headline" || echo "FAIL track_fake_headline: $(tr '\n' ' ' <"$tmp/out")"
check track_fake_scorecard_check 0 "" -- "$KA" scorecard check "$OUT/scorecard.json"
verdicts=$(python3 -c 'import json, sys
sc = json.load(open(sys.argv[1]))
print(" ".join(s["verdict"] for t in sc["tasks"] for s in sorted(t["samples"], key=lambda s: s["sample"])))' "$OUT/scorecard.json")
expect track_fake_verdicts "$verdicts" "ok wrong_answer no_code compile_error"
fields=$(python3 -c 'import json, sys
sc = json.load(open(sys.argv[1]))
s = {x["sample"]: x for x in sc["tasks"][0]["samples"]}
print(sc["track"], sc["model"]["spec"] == sys.argv[2], sc["model"]["kind"], sc["k"], sc["target"], sc["bank"]["split"],
      s[0]["tokens"]["in"], s[3]["tokens"]["out"], s[0]["source_path"], "source_path" in s[2],
      s[0]["speedup_eager"] is not None, s[1]["speedup_eager"], s[1]["score"], s[0]["score"] >= 0.5,
      sc["aggregates"]["overall"]["n_samples"])' "$OUT/scorecard.json" "$MODEL")
expect track_fake_fields "$fields" "capability True open 4 opencl public 1000 103 kernels/gelu_bias_scale/0.c False True None 0.0 True 4"
cmp -s "$OUT/kernels/$TASK/0.c" "$SOL" && echo "PASS track_fake_kernel_file" || echo "FAIL track_fake_kernel_file: kernels/$TASK/0.c differs from the reply's code"
expect track_fake_results_lines "$(wc -l <"$OUT/results.jsonl" | tr -d ' ')" 4
expect track_fake_requests "$(python3 -c 'import json, sys
print(sorted((r["task"], r["sample"]) for r in map(json.loads, open(sys.argv[1]))))' "$tmp/log")" \
	"[('gelu_bias_scale', 0), ('gelu_bias_scale', 1), ('gelu_bias_scale', 2), ('gelu_bias_scale', 3)]"
# The server received exactly what `ka prompt` prints, as the only message.
"$KA" prompt $TASK --target opencl >"$tmp/prompt.txt"
want_sha=$(python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$tmp/prompt.txt")
expect track_fake_prompt_exact "$(python3 -c 'import json, sys
print(sorted({(r["sha256"], r["system"]) for r in map(json.loads, open(sys.argv[1]))}))' "$tmp/log")" "[('$want_sha', False)]"
expect track_fake_journal "$(sql "$OUT/journal.sqlite" "SELECT (SELECT COUNT(*) FROM grades), (SELECT COUNT(*) FROM replies WHERE ok), (SELECT COUNT(*) FROM sources WHERE code IS NULL), (SELECT group_concat(verdict) FROM (SELECT verdict FROM grades ORDER BY sample))")" \
	"4|4|1|ok,wrong_answer,no_code,compile_error"
# Same command again: nothing sent, nothing graded again, same verdicts.
check track_fake_rerun 0 "scorecard: $OUT/scorecard.json" -- "$KA" --track capability --api-model "$MODEL" --k 4 --out "$OUT" "${KNOBS[@]}"
expect track_fake_rerun_no_requests "$(wc -l <"$tmp/log" | tr -d ' ')" 4
expect track_fake_rerun_journal "$(sql "$OUT/journal.sqlite" "SELECT (SELECT COUNT(*) FROM grades), (SELECT COUNT(*) FROM starts), (SELECT MAX(start_id) FROM grades)")" "4|2|1"
check track_fake_rerun_check 0 "" -- "$KA" scorecard check "$OUT/scorecard.json"
# Other arguments on the same folder: refused, one line, nothing touched.
check track_fake_other_args 2 "holds a different run (k is 4 there, 3 here)" -- "$KA" --track capability --api-model "$MODEL" --k 3 --out "$OUT" "${KNOBS[@]}"
one_line track_fake_other_args_one_line
check track_fake_other_model 2 "holds a different run (model is" -- "$KA" --track capability --api-model archive:bank/public --k 4 --out "$OUT" "${KNOBS[@]}"
# --fresh discards the old run and starts this one.
check track_fake_fresh 0 "1 of 1 samples graded" -- "$KA" --track capability --api-model "$MODEL" --k 1 --out "$OUT" --fresh --no-timing "${KNOBS[@]}"
expect track_fake_fresh_journal "$(sql "$OUT/journal.sqlite" "SELECT (SELECT COUNT(*) FROM grades), (SELECT COUNT(*) FROM starts)")" "1|1"
expect track_fake_fresh_kernels "$(ls "$OUT/kernels/$TASK")" "0.c"
stop_server

# ---- a failed request: exit 1, retried by the next start ---------------------
export KA_HOME=${KA_HOME:-$PWD} KA_TEST_FLAKY_LOG=$tmp/flaky.log KA_TEST_FLAKY_OK=$tmp/flaky.ok
OUT=$tmp/d
FLAKY=(--track capability --api-model "cmd:sh $PWD/tests/data/track/flaky_model.sh" --k 3 --out "$OUT" --no-timing "${KNOBS[@]}")
check track_failed_request 1 "1 of 3 samples are not graded (1 requests failed); run the same command again" -- "$KA" "${FLAKY[@]}"
check track_failed_request_check 0 "2 samples" -- "$KA" scorecard check "$OUT/scorecard.json"
expect track_failed_request_journal "$(sql "$OUT/journal.sqlite" "SELECT (SELECT COUNT(*) FROM grades), (SELECT group_concat(ok) FROM (SELECT ok FROM replies ORDER BY sample))")" "2|1,0,1"
touch "$KA_TEST_FLAKY_OK"
check track_failed_request_retry 0 "3 of 3 samples graded" -- "$KA" "${FLAKY[@]}"
expect track_failed_request_calls "$(sort "$KA_TEST_FLAKY_LOG" | tr '\n' ' ')" "0 1 1 2 "

# ---- (b) kill -9 at random points, resume ------------------------------------
K=6
# Each reply takes 1 s: at concurrency 2 the first start needs at least 3 s,
# so a kill between 1 and 3 s lands while it works, however fast grading is.
start_server '{"gelu_bias_scale": ["correct", "wrong", "correct", "nocode", "correct", "syntax"]}' 1.0
MODEL="openai:fake-coder@http://127.0.0.1:$port/v1"
OUT=$tmp/b
CMD=("$KA" --track capability --api-model "$MODEL" --k $K --concurrency 2 --out "$OUT" --quiet "${KNOBS[@]}")
kills=0
for round in 1 2 3 4; do
	"${CMD[@]}" >"$tmp/b.out" 2>&1 &
	pid=$!
	delay=$(( (RANDOM % 21) + 10 )) # 1.0 to 3.0 s
	sleep "$(( delay / 10 )).$(( delay % 10 ))"
	if kill -9 "$pid" 2>/dev/null; then
		kills=$((kills + 1))
	fi
	wait "$pid" 2>/dev/null
done
check track_resume_final 0 "scorecard: $OUT/scorecard.json" -- "${CMD[@]}"
if [ "$kills" -ge 1 ]; then echo "PASS track_resume_killed ($kills kills)"; else echo "FAIL track_resume_killed: the run always finished before the kill"; fi
check track_resume_scorecard_check 0 "" -- "$KA" scorecard check "$OUT/scorecard.json"
expect track_resume_graded_once "$(sql "$OUT/journal.sqlite" "SELECT COUNT(*), COUNT(DISTINCT sample) FROM grades")" "$K|$K"
expect track_resume_verdicts "$(sql "$OUT/journal.sqlite" "SELECT group_concat(verdict) FROM (SELECT verdict FROM grades ORDER BY sample)")" \
	"ok,wrong_answer,ok,no_code,ok,compile_error"
expect track_resume_scorecard_samples "$(python3 -c 'import json, sys
sc = json.load(open(sys.argv[1])); print(sum(len(t["samples"]) for t in sc["tasks"]))' "$OUT/scorecard.json")" $K
# No request reached the server after its reply was in the journal, and none
# more often than once plus once per kill.
python3 - "$tmp/log" "$OUT/journal.sqlite" "$kills" <<'EOF' && echo "PASS track_resume_no_repeat" || echo "FAIL track_resume_no_repeat"
import collections, json, sqlite3, sys
log = [json.loads(l) for l in open(sys.argv[1])]
db = sqlite3.connect(sys.argv[2])
stored = {(t, s): r for t, s, r in db.execute("SELECT task, sample, received FROM replies WHERE ok")}
bad = [r for r in log if (r["task"], r["sample"]) in stored and r["t"] > stored[(r["task"], r["sample"])]]
count = collections.Counter((r["task"], r["sample"]) for r in log)
over = {k: n for k, n in count.items() if n > 1 + int(sys.argv[3])}
if bad or over or len(stored) != len(count):
    print("FAIL track_resume_no_repeat: sent after stored %s; too often %s; %d stored, %d asked" % (bad, over, len(stored), len(count)))
    sys.exit(1)
EOF
expect track_resume_starts "$(sql "$OUT/journal.sqlite" "SELECT COUNT(*) >= 2 FROM starts")" 1
stop_server
