#!/usr/bin/env bash
# track_harness.sh: `ka --track harness` (track 4) end to end on the CPU: the
# tiny Llama-shaped trainee of tools/make_tiny_model.py (pretrained on four
# L1 tasks' OpenCL solutions), the real torch engine, the grader on PoCL and
# a fake researcher on loopback (tools/fakeserver.py's hresearcher persona,
# whose edits are tests/data/harness/*.lua in order). A 2-round run:
#   (a) killed with kill -9 inside the first `train` call, then the same
#       command: it finishes; the journaled round-0 sample call and the
#       journaled researcher reply are not redone; a third run runs no
#       engine call and sends no request; with an SFT set removed, the
#       journaled harness is re-run and gives the same set;
#   (b) edit 1 (deduplicate the pool) is accepted: round-1.lua is that
#       file, round-1.diff shows the change, and the improved arm trains on
#       distinct kernels only while the frozen arm's SFT set repeats them;
#   (c) edit 2 (reads /etc/passwd with io.open, runs os.execute) is
#       rejected with the sandbox's reason, round 2 falls back to round 1's
#       harness (round-2.lua = round-1.lua, empty diff), nothing escaped;
#   (d) the journal holds every engine call with its hashes, the edits and
#       the harness runs; both arms drew the same generations;
#   (e) `ka scorecard check` accepts the harness_rsi scorecard and `ka
#       board` renders it (the harness table and the versions table);
#   (f) bad input: one line, exit 2.
# SKIPs when torch, transformers or tokenizers cannot be imported by
# $KA_PYTHON (default python3); tools/setup.sh installs them.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
PY=${KA_PYTHON:-python3}
export KA_PYTHON=$PY HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
if ! "$PY" -c "import torch, transformers, tokenizers, safetensors" 2>/dev/null; then
	echo "SKIP track_harness: $PY cannot import torch, transformers, tokenizers and safetensors (tools/setup.sh installs them)"
	exit 0
fi
tmp=$(mktemp -d)
kapid=
cleanup() {
	[ -n "$kapid" ] && kill -9 "$kapid" 2>/dev/null
	exec 3>&- 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
unset OPENAI_API_KEY KA_OPENAI_API_KEY OPENAI_BASE_URL KA_PRICES
export HOME=$tmp
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
expect() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
# FILE PYEXPR (s = the parsed JSON)
jval() { "$PY" -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
calls() { sed -n 's/.*engine calls run by this process: \([0-9]*\).*/\1/p' "$1"; }
sent() { sed -n 's/.*researcher requests sent: \([0-9]*\).*/\1/p' "$1"; }

. tests/train/lib/tiny_trainee.sh
tiny_setup

mkfifo "$tmp/ctl"
"$PY" tools/fakeserver.py --bank "$BANK" --exit-on-stdin-eof <"$tmp/ctl" >"$tmp/port" &
exec 3>"$tmp/ctl"
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(head -1 "$tmp/port")
R="openai:hresearcher@http://127.0.0.1:$port/v1"

OUT=$tmp/out
RUN=("$KA" --track harness --researcher "$R" --trainee "$tmp/tiny" --rounds 2 --k 2
	--engine torch --bank "$BANK" --tier L1 --target opencl --no-timing --prompt-style short
	--max-tokens 128 --epochs 4 --lr 2e-3 --batch 8 --seed 1 --out "$OUT")

# (a) kill -9 inside the first train call
t0=$(date +%s)
kill_and_resume improved
# 9 calls in all (1 + 2 rounds x 2 arms x (train + sample)); round 0's was finished
expect "engine calls run after resuming" "$(calls "$tmp/run2.out")" 8
# round 1's edit was answered and journaled before the kill: only round 2's is sent
expect "researcher requests sent after resuming" "$(sent "$tmp/run2.out")" 1
echo "# track_harness: loop $(($(date +%s) - t0))s"
"${RUN[@]}" >"$tmp/run3.out" 2>&1
expect "third run: no engine call" "$(calls "$tmp/run3.out")" 0
expect "third run: no request" "$(sent "$tmp/run3.out")" 0
# an SFT set removed from OUT/data: the journaled harness is re-run and
# must give the same set (or the train call's inputs would differ)
cp "$OUT/data/r1_improved_sft.jsonl" "$tmp/sft1"
rm "$OUT/data/r1_improved_sft.jsonl" "$OUT/data/r2_frozen_sft.jsonl"
jval "$OUT/scorecard.json" "s['summary']" >"$tmp/sum1"
"${RUN[@]}" >"$tmp/run4.out" 2>&1
expect "an SFT set removed: the run still exits 0" "$?" 0
cmp -s "$tmp/sft1" "$OUT/data/r1_improved_sft.jsonl" && pass "the re-run harness gives the same SFT set" ||
	fail "re-run harness" "$(tail -3 "$tmp/run4.out" | tr '\n' ' ')"
expect "an SFT set removed: no engine call" "$(calls "$tmp/run4.out")" 0
jval "$OUT/scorecard.json" "s['summary']" >"$tmp/sum2"
cmp -s "$tmp/sum1" "$tmp/sum2" && pass "the same command again writes the same summary" || fail "same summary" "differs"

SC=$OUT/scorecard.json
row() { jval "$SC" "[r for r in s['rounds'] if r['round'] == $1 and r['arm'] == '$2'][0]$3"; }

# (b) the dedup edit: accepted, kept, diffable, and it changed the data
expect "edit 1 accepted" "$(row 1 improved "['edit']['accepted']")" True
cmp -s "$OUT/harness/round-1.lua" tests/data/harness/1_dedup.lua && pass "round-1.lua is the researcher's file" ||
	fail "round-1.lua" "differs from tests/data/harness/1_dedup.lua"
cmp -s "$OUT/harness/round-0.lua" harnesses/default.lua && pass "round-0.lua is the shipped default" ||
	fail "round-0.lua" "differs from harnesses/default.lua"
grep -q '^+    if not seen\[key\]' "$OUT/harness/round-1.diff" && grep -q '^--- round-0.lua' "$OUT/harness/round-1.diff" &&
	pass "round-1.diff shows the change" || fail "round-1.diff" "$(head -5 "$OUT/harness/round-1.diff" | tr '\n' ' ')"
dups() { "$PY" -c 'import json, sys
c = [json.loads(l)["completion"] for l in open(sys.argv[1])]
print(len(c) - len(set(c)))' "$1"; }
expect "improved r1 SFT set: no duplicate" "$(dups "$OUT/data/r1_improved_sft.jsonl")" 0
expect "improved r2 SFT set: no duplicate" "$(dups "$OUT/data/r2_improved_sft.jsonl")" 0
fd=$(dups "$OUT/data/r2_frozen_sft.jsonl")
[ "$fd" -gt 0 ] && pass "frozen r2 SFT set repeats kernels ($fd duplicates)" || fail "frozen duplicates" "$fd"
expect "improved rows: examples = distinct" "$(jval "$SC" "all(r['n_examples'] == r['n_distinct'] for r in s['rounds'] if r['arm'] == 'improved')")" True

# (c) the escape edit: rejected with its reason, round 2 keeps round 1's harness
expect "edit 2 rejected" "$(row 2 improved "['edit']['accepted']")" False
reason=$(row 2 improved "['edit']['reason']")
case "$reason" in
*"attempt to index a nil value (global 'io')"*) pass "edit 2's reason names the sandbox ($reason)" ;;
*) fail "edit 2's reason" "$reason" ;;
esac
grep -q "round 2: edit rejected: dry run on round 2's pool: harness.lua:6: attempt to index a nil value (global 'io'); round 2 keeps round-1's harness" \
	"$tmp/run1.out" "$tmp/run2.out" && pass "the rejection is one line on stderr" || fail "rejection line" "$(grep 'round 2' "$tmp/run2.out")"
cmp -s "$OUT/harness/round-2.lua" "$OUT/harness/round-1.lua" && [ ! -s "$OUT/harness/round-2.diff" ] &&
	pass "round 2 falls back to round 1's harness" || fail "fallback" "round-2.lua differs"
cmp -s "$OUT/harness/round-2.proposed.lua" tests/data/harness/2_escape.lua && pass "the rejected proposal is kept" ||
	fail "round-2.proposed.lua" "missing or different"
expect "improved r2 trained with round 1's harness" "$(row 2 improved "['harness_version']")" 1
[ ! -e /tmp/ka_harness_escaped ] && pass "nothing escaped" || fail "escape" "/tmp/ka_harness_escaped exists"
expect "edits accepted, rejected" "$(jval "$SC" "(s['summary']['edits_accepted'], s['summary']['edits_rejected'])")" "(1, 1)"

# (d) the journal and the budgets
"$PY" - "$OUT" >"$tmp/jcheck" 2>&1 <<'PYEOF'
import json, sqlite3, sys
out = sys.argv[1]
db = sqlite3.connect(out + "/journal.sqlite")
cols = [r[1] for r in db.execute("PRAGMA table_info(grades)")]
units = {}
for r in db.execute("SELECT * FROM grades").fetchall():
    d = dict(zip(cols, r))
    for v in d.values():
        if isinstance(v, str) and v.startswith("{"):
            key = [x for x in d.values() if isinstance(x, str) and x.startswith("r")]
            if key:
                units[key[0]] = json.loads(v)
eng = ["r0/base/sample"] + ["r%d/%s/%s" % (r, a, p) for r in (1, 2)
       for a in ("improved", "frozen") for p in ("train", "sample")]
miss = [k for k in eng if k not in units]
bad = [k for k in eng if k in units and (len(units[k].get("inputs_hash", "")) != 16
       or len(units[k].get("outputs_hash", "")) != 16)]
other = ["r1/improved/edit", "r2/improved/edit"] + ["r%d/%s/harness" % (r, a)
         for r in (1, 2) for a in ("improved", "frozen")]
miss2 = [k for k in other if k not in units]
print("engine", len(eng) - len(miss), "missing", miss, "bad", bad, "other missing", miss2)
s = json.load(open(out + "/scorecard.json"))["summary"]
print("requests", sorted(set(v["requests"] for v in s["budget_used"].values())),
      s["budget_allowed"]["requests"])
PYEOF
grep -q "engine 9 missing \[\] bad \[\] other missing \[\]" "$tmp/jcheck" &&
	pass "journal: 9 engine calls with hashes, 2 edits, 4 harness runs" || fail "journal" "$(tr '\n' ' ' <"$tmp/jcheck")"
req=$(sed -n 's/^requests \[\([0-9]*\)\] \([0-9]*\)$/\1 \2/p' "$tmp/jcheck")
set -- $req
if [ -n "${1:-}" ] && [ "$1" = "${2:-}" ]; then pass "equal generation budgets ($1 per arm)"; else
	fail "equal generation budgets" "$(grep requests "$tmp/jcheck")"; fi

# (e) the scorecard and the board
"$KA" scorecard check "$SC" >"$tmp/check.out" 2>&1 && pass "ka scorecard check" ||
	fail "ka scorecard check" "$(head -c 400 "$tmp/check.out")"
expect "harness_rsi scorecard" "$(jval "$SC" "s['track']")" harness_rsi
if "$PY" -c 'import jsonschema' 2>/dev/null; then
	"$PY" -c 'import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open("docs/scorecard.schema.json")))
e = list(v.iter_errors(json.load(open(sys.argv[1]))))
print(e[0].message if e else "ok")' "$SC" >"$tmp/schema.out" 2>&1
	expect "docs/scorecard.schema.json accepts it" "$(cat "$tmp/schema.out")" ok
fi
expect "round 0 solves some held-out tasks" "$(jval "$SC" "s['summary']['c0']['value'] > 0")" True
"$KA" board "$SC" -o "$tmp/site" >"$tmp/board.out" 2>&1 &&
	grep -q 'id="t-harness-rsi"' "$tmp/site/index.html" &&
	grep -q 'hresearcher-harness_rsi.html' "$tmp/site/index.html" &&
	grep -q 'Harness versions' "$tmp/site/m/"*harness_rsi.html &&
	pass "the harness board shows the run" || fail "harness board" "$(head -c 300 "$tmp/board.out")"

# (f) bad input
"$KA" --track harness --researcher "$R" --rounds 1 --bank "$BANK" >"$tmp/o" 2>"$tmp/e"
expect "no --trainee: exit 2" "$?" 2
grep -q -- "--trainee (an HF id or a local folder) is required" "$tmp/e" && [ "$(wc -l <"$tmp/e")" = 1 ] &&
	pass "no --trainee: one line" || fail "no --trainee" "$(cat "$tmp/e")"
echo 'x = 1' >"$tmp/bad.lua"
"$KA" --track harness --researcher "$R" --trainee "$tmp/tiny" --harness "$tmp/bad.lua" --bank "$BANK" \
	--tier L1 --target opencl --out "$tmp/bad" >"$tmp/o" 2>"$tmp/e"
expect "a round-0 harness without harness(): exit 2" "$?" 2
grep -q "harness.lua defines no function harness(ctx)" "$tmp/e" && [ "$(wc -l <"$tmp/e")" = 1 ] &&
	pass "a bad round-0 harness: one line" || fail "bad round-0 harness" "$(cat "$tmp/e")"
