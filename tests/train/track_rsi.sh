#!/usr/bin/env bash
# track_rsi.sh: `ka --track rsi` end to end on the CPU: a tiny Llama-shaped
# model made by tools/make_tiny_model.py (pretrained on four L1 tasks' OpenCL
# solutions), the real torch engine (engines/torch/engine.py) and the grader
# on PoCL. The four tasks are first standardized (`ka bank standardize`, the
# bank's own solutions as the anchor, band 0..1: all kept), then a 2-round
# loop with the three arms and the recursion-interruption arm after round 1
# (--interrupt-after 1: ckpt_frozen in round 2):
#   (a) killed with kill -9 inside the first `train` call, then the same
#       command: it finishes, the journaled round-0 sample call is not run
#       again, the killed train call is; a third run runs no engine call;
#   (b) the journal holds every engine call (sample, train) with its input
#       and output hashes and the diagnostics of every round and arm; the
#       four arms drew the same generations;
#   (c) `ka scorecard check` accepts the weight_rsi scorecard (schema /2):
#       diagnostics in the rows, ckpt_frozen in round 2 only, self minus
#       ckpt, the standardized bank, compiled x null with its reason; the
#       standardized and diagnostics boards show it;
#   (d) a model that cannot be loaded (a folder, an HF id): one clear line,
#       exit 1.
# SKIPs when torch, transformers or tokenizers cannot be imported by
# $KA_PYTHON (default python3); tools/setup.sh installs them.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
PY=${KA_PYTHON:-python3}
export KA_PYTHON=$PY HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
if ! "$PY" -c "import torch, transformers, tokenizers, safetensors" 2>/dev/null; then
	echo "SKIP track_rsi: $PY cannot import torch, transformers, tokenizers and safetensors (tools/setup.sh installs them)"
	exit 0
fi
tmp=$(mktemp -d)
kapid=
cleanup() {
	[ -n "$kapid" ] && kill -9 "$kapid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
expect() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }

. tests/train/lib/tiny_trainee.sh
tiny_setup

# the standardized bank: every task kept (the anchor solves them all)
STD=$tmp/std
"$KA" bank standardize --anchor "archive:$BANK" --scale small --band 0,1 --k 1 --target opencl \
	--no-timing --quiet "$BANK" "$STD" >"$tmp/std.out" 2>&1 &&
	grep -q "4 of 4 tasks kept" "$tmp/std.out" && pass "standardized bank (4 of 4 kept)" ||
	fail "standardized bank" "$(head -c 300 "$tmp/std.out")"

OUT=$tmp/out
RUN=("$KA" --track rsi --model "$tmp/tiny" --rounds 2 --k 2 --engine torch --bank "$STD"
	--tier L1 --target opencl --no-timing --prompt-style short --max-tokens 128
	--epochs 4 --lr 2e-3 --batch 8 --seed 1 --interrupt-after 1 --out "$OUT")

# (a) kill -9 inside the first train call
t0=$(date +%s)
kill_and_resume self
# 18 calls in all (1 + 2 rounds x (3 train + 3 sample + 1 fresh base sample)
# + round 2's ckpt_frozen sample from the checkpoint, train and sample),
# round 0's sample was finished before the kill
expect "calls run after resuming" "$(sed -n 's/.*engine calls run by this process: //p' "$tmp/run2.out")" 17
echo "# track_rsi: loop $(($(date +%s) - t0))s"
"${RUN[@]}" >"$tmp/run3.out" 2>&1
expect "third run runs no engine call" \
	"$(sed -n 's/.*engine calls run by this process: //p' "$tmp/run3.out")" 0

# (b) the journal and the budgets
"$PY" - "$OUT" >"$tmp/jcheck" 2>&1 <<'PYEOF'
import json, sqlite3, sys
out = sys.argv[1]
db = sqlite3.connect(out + "/journal.sqlite")
cols = [r[1] for r in db.execute("PRAGMA table_info(grades)")]
rows = db.execute("SELECT * FROM grades").fetchall()
units, diags = {}, {}
for r in rows:
    d = dict(zip(cols, r))
    for v in d.values():
        if isinstance(v, str) and v.startswith("{") and "inputs_hash" in v:
            key = [x for x in d.values() if isinstance(x, str) and x.startswith("r")][0]
            units[key] = json.loads(v)
        if isinstance(v, str) and v.startswith("{") and '"retention"' in v:
            key = [x for x in d.values() if isinstance(x, str) and x.startswith("r")][0]
            diags[key] = json.loads(v)
want = ["r0/base/sample"] + ["r%d/%s/%s" % (r, a, p) for r in (1, 2)
        for a in ("self", "fresh_frozen", "round0") for p in ("train", "sample")] + \
       ["r1/fresh_frozen/base_sample", "r2/fresh_frozen/base_sample"] + \
       ["r2/ckpt_frozen/ckpt_sample", "r2/ckpt_frozen/train", "r2/ckpt_frozen/sample"]
miss = [k for k in want if k not in units]
bad = [k for k, u in units.items() if len(u.get("inputs_hash", "")) != 16 or len(u.get("outputs_hash", "")) != 16]
print("units", len(units), "missing", miss, "bad", bad)
print("diags", sorted(diags))
sc = json.load(open(out + "/scorecard.json"))
s = sc["summary"]
used = s["budget_used"]
print("requests", sorted(set(v["requests"] for v in used.values())), s["budget_allowed"]["requests"])
PYEOF
grep -q "units 18 missing \[\] bad \[\]" "$tmp/jcheck" && pass "journal: 18 engine calls with input and output hashes" ||
	fail "journal" "$(cat "$tmp/jcheck" | tr '\n' ' ')"
grep -qx "diags \['r0/base/diag', 'r1/fresh_frozen/diag', 'r1/round0/diag', 'r1/self/diag', 'r2/ckpt_frozen/diag', 'r2/fresh_frozen/diag', 'r2/round0/diag', 'r2/self/diag'\]" "$tmp/jcheck" &&
	pass "journal: the diagnostics of every round and arm" || fail "journal diagnostics" "$(grep ^diags "$tmp/jcheck")"
grep -q "ka: r2/ckpt_frozen: C .* retention" "$tmp/run2.out" && pass "diagnostics printed per round and arm" ||
	fail "diagnostics printed" "$(grep 'ka: r2/' "$tmp/run2.out" | head -3)"
req=$(sed -n 's/^requests \[\([0-9]*\)\] \([0-9]*\)$/\1 \2/p' "$tmp/jcheck")
set -- $req
if [ -n "${1:-}" ] && [ "$1" = "${2:-}" ]; then pass "equal generation budgets ($1 per arm)"; else
	fail "equal generation budgets" "$(grep requests "$tmp/jcheck")"; fi

# (c) the scorecard
"$KA" scorecard check "$OUT/scorecard.json" >"$tmp/check.out" 2>&1 && pass "ka scorecard check" ||
	fail "ka scorecard check" "$(head -c 400 "$tmp/check.out")"
grep -q '"track": "weight_rsi"' "$OUT/scorecard.json" && pass "weight_rsi scorecard" ||
	fail "weight_rsi scorecard" "no track"
c0=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['c0']['value'] > 0)" "$OUT/scorecard.json")
expect "round 0 solves some held-out tasks" "$c0" True
"$PY" - "$OUT/scorecard.json" >"$tmp/sc" 2>&1 <<'PYEOF'
import json, sys
sc = json.load(open(sys.argv[1]))
s, rows = sc["summary"], sc["rounds"]
print("schema", sc["schema"])
print("ckpt rounds", sorted(r["round"] for r in rows if r["arm"] == "ckpt_frozen"))
diag = all(("diversity" in r and "compression" in r and "retention" in r) for r in rows)
numeric = all(isinstance(r["diversity"], float) and isinstance(r["compression"], float)
              for r in rows if r["round"] > 0 and r["n_examples"] > 0)
print("diag fields", diag, numeric, all("c_minus_fresh" in r for r in rows if r["arm"] != "fresh_frozen"))
print("interrupt", s["interrupt_after"], "self_minus_ckpt" in s,
      "c_minus_ckpt" in [r for r in rows if r["round"] == 2 and r["arm"] == "self"][0])
print("compiled", s["compiled_x"], s["compiled_x_reason"], s["baseline"])
st = s["standardized"]
print("standardized", s["bank_tier"], st["scale"], st["n_tasks"], st["anchor"].startswith("archive:"))
PYEOF
expect "scorecard schema" "$(sed -n 's/^schema //p' "$tmp/sc")" "ka-scorecard/2"
expect "ckpt_frozen rows after the interruption only" "$(sed -n 's/^ckpt rounds //p' "$tmp/sc")" "[2]"
expect "rows carry the diagnostics" "$(sed -n 's/^diag fields //p' "$tmp/sc")" "True True True"
expect "interruption in the summary" "$(sed -n 's/^interrupt //p' "$tmp/sc")" "1 True True"
expect "compiled x null with its reason" "$(sed -n 's/^compiled //p' "$tmp/sc")" "None not timed (--no-timing) eager"
expect "the standardized bank in the summary" "$(sed -n 's/^standardized //p' "$tmp/sc")" "small small 4 True"

"$KA" board "$OUT/scorecard.json" -o "$tmp/site" >"$tmp/board.out" 2>&1 &&
	grep -q 'tiny-weight_rsi.html' "$tmp/site/index.html" && pass "the board shows the run" ||
	fail "board" "$(head -c 300 "$tmp/board.out")"
sed -n '/id="t-standardized"/,/<\/table>/p' "$tmp/site/index.html" | grep -q '>tiny</a>' &&
	pass "the standardized board shows the run" || fail "standardized board" "no row for tiny"
sed -n '/id="diagnostics"/,/<\/section>/p' "$tmp/site/index.html" >"$tmp/diag.html"
[ "$(grep -c '<svg' "$tmp/diag.html")" = 5 ] && grep -q 'tiny (small)' "$tmp/diag.html" &&
	pass "the diagnostics board plots the run" || fail "diagnostics board" "$(grep -c '<svg' "$tmp/diag.html") plots"

# (d) a model that cannot be loaded
"$KA" --track rsi --model "$tmp/no-such-model" --rounds 1 --k 1 --bank "$BANK" --tier L1 \
	--target opencl --no-timing --out "$tmp/bad" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
expect "unloadable model exits 1" "$rc" 1
grep -q "cannot load model" "$tmp/bad.err" && [ "$(wc -l <"$tmp/bad.err")" -le 2 ] &&
	pass "unloadable model: one clear line" || fail "unloadable model message" "$(head -c 400 "$tmp/bad.err")"
# an HF id that is not in the cache (offline: no network call is waited on)
"$KA" --track rsi --model no-such-org/no-such-model --rounds 1 --k 1 --bank "$BANK" --tier L1 \
	--target opencl --no-timing --out "$tmp/bad2" >"$tmp/bad2.out" 2>"$tmp/bad2.err"
rc=$?
expect "unloadable HF id exits 1" "$rc" 1
grep -q "^ka --track rsi: engine torch: cannot load model 'no-such-org/no-such-model': " "$tmp/bad2.err" &&
	[ "$(wc -l <"$tmp/bad2.err")" = 1 ] && pass "unloadable HF id: one clear line" ||
	fail "unloadable HF id message" "$(head -c 400 "$tmp/bad2.err")"
