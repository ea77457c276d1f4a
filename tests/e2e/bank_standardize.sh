#!/usr/bin/env bash
# bank_standardize.sh: `ka bank standardize` end to end on PoCL, the anchor a
# replay model (recorded completions: no network) whose pass rates are known:
# row_max 4 of 4 correct, row_sum 2 of 4, mish 1 of 4, softplus 0 of 4 (the
# others reply without code). With k 4 and the small band [0.125, 0.75] the
# standardized bank keeps row_sum and mish: the too easy and the unsolved
# are dropped. Checks the bank folder (kept tasks, lib/, `ka bank list`),
# OUT/standardized.json (anchor, band, per-task figures, the kept tasks'
# figures, its hash = the bank's), a second run with another band (the
# anchor's journaled run is reused, OUT replaced), a timed run (compiled x
# null with the reason: OpenCL has no compiled baseline) and the refusals.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
expect() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }

BANK=$tmp/bank
mkdir -p "$BANK/L1"
for t in row_max row_sum mish softplus; do cp -r bank/public/L1/$t "$BANK/L1/"; done
cp -r bank/lib "$BANK/lib"
python3 - "$BANK" "$tmp/anchor.jsonl" <<'PY'
import json, sys
bank, out = sys.argv[1], sys.argv[2]
right = {"row_max": 4, "row_sum": 2, "mish": 1, "softplus": 0}
with open(out, "w") as f:
    for task, n in right.items():
        src = open("%s/L1/%s/solutions/opencl.c" % (bank, task)).read()
        for s in range(4):
            text = "```opencl\n%s```\n" % src if s < n else "I cannot write this kernel."
            f.write(json.dumps({"task": task, "sample": s, "completion": text}) + "\n")
PY
STD=(--anchor "replay:$tmp/anchor.jsonl" --target opencl --k 4 --quiet)

# 1. the small band
"$KA" bank standardize "${STD[@]}" --scale small --no-timing "$BANK" "$tmp/std" >"$tmp/o1" 2>"$tmp/e1"
rc=$?
expect "standardize exits 0" "$rc" 0
[ "$rc" = 0 ] || head -c 600 "$tmp/e1"
grep -q "2 of 4 tasks kept" "$tmp/o1" && pass "summary line: 2 of 4 kept" ||
	fail "summary line" "$(head -c 300 "$tmp/o1")"
kept=$(cd "$tmp/std" && ls -d L1/* 2>/dev/null | tr '\n' ' ')
expect "kept task folders" "$kept" "L1/mish L1/row_sum "
[ -f "$tmp/std/lib/eager.cuh" ] && pass "lib/ copied" || fail "lib/ copied" "no $tmp/std/lib/eager.cuh"
[ -f "$tmp/std/L1/row_sum/solutions/opencl.c" ] && pass "task folders copied whole" ||
	fail "task folders copied whole" "no solutions/opencl.c"
n=$("$KA" bank list --bank "$tmp/std" 2>&1 | wc -l)
expect "ka bank list reads the standardized bank" "$n" 2
python3 - "$tmp/std/standardized.json" >"$tmp/m1" 2>&1 <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in m["tasks"]}
print("format", m["format"], m["scale"], m["k"], m["band"], m["baseline"], m["timed"])
print("anchor", m["anchor"].startswith("replay:"))
print("counts", m["n_tasks"], m["source"]["n_tasks"])
print("pass", [(k, t[k]["pass_rate"], t[k]["kept"]) for k in sorted(t)])
f = m["figures"]
print("figures", f["pass_rate"], round(f["c"], 6), f["compiled_x"], f["compiled_x_reason"])
print("hash", m["hash"])
PY
grep -qx "format ka-std-bank/1 small 4 \[0.125, 0.75\] eager False" "$tmp/m1" &&
	pass "manifest: format, scale, k, band, baseline" || fail "manifest head" "$(head -2 "$tmp/m1")"
grep -qx "counts 2 4" "$tmp/m1" && pass "manifest: 2 of 4 tasks" || fail "manifest counts" "$(cat "$tmp/m1")"
grep -qx "pass \[('mish', 0.25, True), ('row_max', 1.0, False), ('row_sum', 0.5, True), ('softplus', 0.0, False)\]" "$tmp/m1" &&
	pass "manifest: per-task pass rates and what was kept" || fail "manifest per task" "$(grep ^pass "$tmp/m1")"
# C of an ok sample untimed is 0.5: mish 1/4 -> 0.125, row_sum 2/4 -> 0.25
grep -qx "figures 0.375 0.1875 None not timed (--no-timing)" "$tmp/m1" &&
	pass "manifest: the anchor's figures over the kept tasks" || fail "manifest figures" "$(grep ^figures "$tmp/m1")"
[ -f "$tmp/std.anchor/scorecard.json" ] && pass "the anchor's run is a capability scorecard in OUT.anchor" ||
	fail "anchor run" "no $tmp/std.anchor/scorecard.json"
"$KA" scorecard check "$tmp/std.anchor/scorecard.json" >/dev/null 2>&1 && pass "the anchor's scorecard checks" ||
	fail "anchor scorecard" "ka scorecard check failed"

# 2. another band on the same anchor run: nothing sampled again, OUT replaced
"$KA" bank standardize --anchor "replay:$tmp/anchor.jsonl" --target opencl --k 4 --scale large \
	--band 0,1 --no-timing "$BANK" "$tmp/std" >"$tmp/o2" 2>"$tmp/e2"
rc=$?
expect "second band exits 0" "$rc" 0
grep -q "resuming the run in $tmp/std.anchor: 16 of 16 samples graded, 0 replies to grade, 0 requests to send" "$tmp/e2" &&
	pass "the anchor's journaled run is reused" || fail "anchor run reused" "$(head -c 300 "$tmp/e2")"
grep -q "4 of 4 tasks kept" "$tmp/o2" && pass "band 0,1 keeps all 4" || fail "band 0,1" "$(head -c 300 "$tmp/o2")"
grep -q '"scale": "large"' "$tmp/std/standardized.json" && pass "OUT replaced (scale large)" ||
	fail "OUT replaced" "$(grep scale "$tmp/std/standardized.json")"
ls -d "$tmp"/std.tmp-* >/dev/null 2>&1 && fail "no temporary folder left" "$(ls -d "$tmp"/std.tmp-*)" ||
	pass "no temporary folder left"

# 3. timed on PoCL: OpenCL has no compiled baseline, so compiled x is null with why
"$KA" bank standardize "${STD[@]}" --scale mid --max-seconds 0.3 --min-samples 3 --max-samples 30 \
	--work "$tmp/timed.anchor" "$BANK" "$tmp/timed" >"$tmp/o3" 2>"$tmp/e3"
rc=$?
expect "timed run exits 0" "$rc" 0
python3 - "$tmp/timed/standardized.json" >"$tmp/m3" 2>&1 <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in m["tasks"]}
print(m["timed"], m["baseline"], m["figures"]["compiled_x"], m["figures"]["compiled_x_reason"])
print("eager", t["row_sum"]["eager_x"] is not None, t["row_sum"]["compiled_x"])
PY
grep -qx "True eager None the target has no compiled baseline (only CUDA has one)" "$tmp/m3" &&
	pass "timed on PoCL: compiled x null, the reason said" || fail "timed compiled x" "$(cat "$tmp/m3")"
grep -qx "eager True None" "$tmp/m3" && pass "timed on PoCL: eager speedups kept" ||
	fail "timed eager x" "$(cat "$tmp/m3")"

# 4. refusals
mkdir -p "$tmp/other" && touch "$tmp/other/x"
"$KA" bank standardize "${STD[@]}" --no-timing "$BANK" "$tmp/other" >/dev/null 2>"$tmp/e4"
rc=$?
expect "an OUT that is not a standardized bank: exit 2" "$rc" 2
grep -q "exists and is not a standardized bank" "$tmp/e4" && [ "$(wc -l <"$tmp/e4")" = 1 ] &&
	pass "an OUT that is not a standardized bank: one line" || fail "OUT refusal" "$(cat "$tmp/e4")"
"$KA" bank standardize "${STD[@]}" --band 0.8,0.2 "$BANK" "$tmp/x" >/dev/null 2>"$tmp/e5"
expect "band LO above HI: exit 2" "$?" 2
"$KA" bank standardize "${STD[@]}" --scale huge "$BANK" "$tmp/x" >/dev/null 2>"$tmp/e6"
rc=$?
expect "unknown scale: exit 2" "$rc" 2
grep -q "scale must be small, mid or large" "$tmp/e6" && pass "unknown scale: says so" ||
	fail "unknown scale message" "$(cat "$tmp/e6")"
"$KA" bank standardize --scale small "$BANK" "$tmp/x" >/dev/null 2>"$tmp/e7"
rc=$?
expect "no anchor: exit 2" "$rc" 2
grep -q -- "--anchor MODEL is required" "$tmp/e7" && pass "no anchor: says so" || fail "no anchor" "$(cat "$tmp/e7")"
