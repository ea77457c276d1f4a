#!/usr/bin/env bash
# track_frontier.sh: `ka --track frontier` (track 5) end to end on PoCL,
# against tools/fakeserver.py's personas on loopback (docs/frontier.md). The
# frontier is seeded with silu_scale (train bank), the held-out bank holds
# gelu_tanh. The solver (fsolver) solves silu_scale and whatever a
# "[[solve-as:silu_scale]]" marker names; the proposer answers the seven
# fixtures of tests/data/frontier/, each with its documented outcome:
#   01 a copy (renamed identifiers)       -> rejected at novelty
#   02 easier (the solver solves it)      -> rejected at harder
#   03 its ref calls rand()               -> rejected at dialect
#   04 its ref loops (almost) forever     -> rejected at gold (wall cap)
#   05 a baseline writing out of bounds   -> baseline dropped; then harder
#   06 a constant output                  -> rejected at degenerate
#   07 a valid harder variant             -> accepted, joins the frontier
# A 2-round run (rounds 0, 1, 2 evaluated; proposals after 0 and 1): the scorecard passes `ka scorecard check`, the frontier bank
# exports with `ka bank export`, the board renders the frontier section; the
# same command again sends no request; nothing enters the held-out bank.
# Then a 1-round run against tests/data/frontier_broken/, whose golds pass
# validation and break when graded (in ka-goldbox: docs/frontier.md,
# "Broken tasks"):
#   01 loops (almost) forever when graded  -> rejected at grade_gold (deadline)
#   02 writes past its output when graded  -> rejected at grade_gold (SIGSEGV)
#   03 the same as 01, but accepted first  -> leaves the frontier in round 1
# with the run going on, broken.json beside the task, and the same command
# again sending nothing.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
cleanup() {
	exec 3>&- 4>&- 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
unset OPENAI_API_KEY KA_OPENAI_API_KEY OPENAI_BASE_URL KA_PRICES
export HOME=$tmp

expect() { if [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1: got '$2', want '$3'"; fi; }
jval() { python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
stats() { python3 -c 'import json, sys, urllib.request
print(json.load(urllib.request.urlopen("http://127.0.0.1:%s/_stats" % sys.argv[1]))["requests"])' "$port"; }

mkdir -p "$tmp/seed/L1" "$tmp/held/L1"
cp -r bank/public/L1/silu_scale "$tmp/seed/L1/"
cp -r bank/public/L1/gelu_tanh "$tmp/held/L1/"
held_before=$(find "$tmp/held" -type f | sort | xargs md5sum | md5sum)

mkfifo "$tmp/ctl"
python3 tools/fakeserver.py --bank "$tmp/seed" --exit-on-stdin-eof <"$tmp/ctl" >"$tmp/port" &
exec 3>"$tmp/ctl"
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(head -1 "$tmp/port")
M() { echo "openai:$1@http://127.0.0.1:$port/v1"; }

# ---- usage -------------------------------------------------------------------
"$KA" --track frontier --api-model "$(M fsolver)" >"$tmp/o" 2>&1
expect frontier_needs_proposer "$?:$(grep -c 'proposer is required' "$tmp/o")" "2:1"

# ---- the 2-round run -----------------------------------------------------------
OUT=$tmp/out
run() {
	"$KA" --track frontier --api-model "$(M fsolver)" --proposer "$(M proposer)" \
		--rounds 2 --k 2 --proposals 7 --gold-seconds 8 --target opencl --no-timing \
		--train "$tmp/seed" --heldout "$tmp/held" --out "$OUT" "$@"
}
run >"$tmp/o1" 2>"$tmp/e1"
rc=$?
expect frontier_run_rc "$rc" 0
[ "$rc" = 0 ] || sed 's/^/  /' "$tmp/e1" | tail -20
SC=$OUT/scorecard.json
V=$OUT/frontier/validation.json
outcome() { jval "$V" "[v['step'] for v in s if v['round'] == $1 and v['proposal'] == $2][0]"; }
expect frontier_copy "$(outcome 0 0)" novelty
expect frontier_easier "$(outcome 0 1)" harder
expect frontier_forbidden_call "$(outcome 0 2)" dialect
expect frontier_loops_forever "$(outcome 0 3)" gold
expect frontier_oob_baseline "$(outcome 0 4)" harder
expect frontier_oob_baseline_dropped "$(jval "$V" "[r['why'] for v in s if v['proposal'] == 4 for r in v['record'] if r['step'] == 'baseline'][0][:26]")" "proposed baseline dropped;"
expect frontier_oob_baseline_graded "$(jval "$V" "[r['why'].split('; ')[1] for v in s if v['proposal'] == 4 for r in v['record'] if r['step'] == 'baseline'][0]")" "graded as a candidate on the device: out_of_bounds_write at correctness"
expect frontier_record_version "$(jval "$V" "sorted(set(v['version'] for v in s))")" "[2]"
expect frontier_step_seconds "$(jval "$V" "[(v['proposal'], r['step']) for v in s for r in v['record'] if not r['s'] >= 0] + [v['proposal'] for v in s if not v['wall_s'] > 0]")" "[]"
expect frontier_gold_wall_cap_seconds "$(jval "$V" "[r['s'] >= 8 for v in s if v['round'] == 0 and v['proposal'] == 3 for r in v['record'] if r['step'] == 'gold'][0]")" True
expect frontier_step_order "$(jval "$V" "[r['step'] for v in s if v['round'] == 0 and v['proposal'] == 6 for r in v['record']]")" "['reply', 'schema', 'dialect', 'compile', 'gold', 'degenerate', 'baseline', 'runtime', 'novelty', 'harder']"
expect frontier_degenerate "$(outcome 0 5)" degenerate
expect frontier_harder_accepted "$(outcome 0 6)" accepted
expect frontier_reasons_logged "$(grep -c 'rejected at' "$tmp/e1")" 13
expect frontier_only_harder_joins "$(jval "$V" "sorted(v['name'] for v in s if v['accepted'])")" "['silu_clip_scale']"
expect frontier_round1_copy_of_member "$(jval "$V" "[v['why'] for v in s if v['round'] == 1 and v['proposal'] == 6][0]")" "same name as the frontier task 'silu_clip_scale'"
expect frontier_lineage "$(jval "$OUT/frontier/silu_clip_scale/lineage.json" "s['parent'], s['round'], s['proposer'].split('@')[0]")" "('silu_scale', 0, 'openai:proposer')"
expect frontier_no_baseline_file "$(ls "$OUT/frontier/silu_clip_scale" | tr '\n' ' ')" "lineage.json ref.c task.json "
expect frontier_sizes "$(jval "$SC" "[r['frontier_size'] for r in s['rounds']], s['summary']['frontier_size0'], s['summary']['frontier_final']")" "([1, 2, 2], 1, 2)"
expect frontier_difficulty "$(jval "$SC" "[r['difficulty'] for r in s['rounds']]")" "[0.0, 0.5, 0.5]"
expect frontier_c_per_round "$(jval "$SC" "[r['c']['value'] for r in s['rounds']]")" "[0.5, 0.25, 0.25]"
expect frontier_row_validation "$(jval "$SC" "[sorted(r['validation']['steps']) == sorted(['reply', 'schema', 'dialect', 'compile', 'gold', 'degenerate', 'baseline', 'runtime', 'novelty', 'harder']) for r in s['rounds'][:2]], [s['rounds'][0]['validation']['steps']['gold'][k] for k in ('n', 'failed')], round(s['rounds'][0]['validation']['steps']['gold']['s'], 4), s['rounds'][2]['validation']")" "([True, True], [5, 1], $(jval "$V" "round(sum(r['s'] for v in s if v['round'] == 0 for r in v['record'] if r['step'] == 'gold'), 4)"), {'s': 0.0, 'steps': {}})"
"$KA" scorecard check "$SC" >"$tmp/o" 2>&1
expect frontier_scorecard_check "$?" 0
if python3 -c 'import jsonschema' 2>/dev/null; then
	expect frontier_scorecard_schema "$(python3 -c 'import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open("docs/scorecard.schema.json")))
e = list(v.iter_errors(json.load(open(sys.argv[1]))))
print(e[0].message if e else "valid")' "$SC")" valid
fi
"$KA" bank validate --bank "$OUT/frontier" >"$tmp/o" 2>&1
expect frontier_bank_validates "$?" 0
"$KA" bank export --format jsonl --bank "$OUT/frontier" -o "$tmp/export" >"$tmp/o" 2>&1
expect frontier_bank_export "$?:$(wc -l <"$tmp/export/tasks.jsonl" 2>/dev/null)" "0:1"
expect frontier_heldout_untouched "$(find "$tmp/held" -type f | sort | xargs md5sum | md5sum)" "$held_before"

# ---- the same command again: nothing sent, the same summary -------------------
before=$(stats)
run >"$tmp/o2" 2>"$tmp/e2"
expect frontier_rerun_rc "$?" 0
expect frontier_rerun_no_requests "$(stats)" "$before"
expect frontier_rerun_same "$(jval "$SC" "s['summary']['frontier_final'], s['summary']['accepted']")" "(2, 1)"

# ---- golds that break when graded ----------------------------------------------
mkfifo "$tmp/ctl2"
python3 tools/fakeserver.py --bank "$tmp/seed" --frontier-fixtures tests/data/frontier_broken \
	--exit-on-stdin-eof <"$tmp/ctl2" >"$tmp/port2" &
exec 4>"$tmp/ctl2"
for _ in $(seq 50); do [ -s "$tmp/port2" ] && break; sleep 0.1; done
port2=$(head -1 "$tmp/port2")
B=$tmp/broken
brun() {
	"$KA" --track frontier --api-model "openai:fsolver@http://127.0.0.1:$port2/v1" \
		--proposer "openai:proposer@http://127.0.0.1:$port2/v1" --rounds 1 --k 1 --proposals 3 \
		--gold-seconds 8 --target opencl --no-timing --train "$tmp/seed" --heldout "$tmp/held" \
		--out "$B" "$@"
}
t0=$(date +%s)
brun >"$tmp/b1" 2>"$tmp/be1"
rc=$?
t1=$(date +%s)
expect broken_run_rc "$rc" 0
[ "$rc" = 0 ] || sed 's/^/  /' "$tmp/be1" | tail -20
BV=$B/frontier/validation.json
bwhy() { jval "$BV" "[(v['step'], '$2' in v['why']) for v in s if v['proposal'] == $1][0]"; }
expect broken_loops_when_graded "$(bwhy 0 'ran over its deadline')" "('grade_gold', True)"
expect broken_writes_past_when_graded "$(bwhy 1 'killed by signal 11')" "('grade_gold', True)"
expect broken_evidence_names_task "$(bwhy 0 'task silu_lazy_loop is broken: the gold of task silu_lazy_loop')" "('grade_gold', True)"
expect broken_passed_gold_first "$(jval "$BV" "[[r['step'] for r in v['record'] if r['ok']][-1] for v in s if v['proposal'] < 2]")" "['novelty', 'novelty']"
expect broken_later_accepted "$(jval "$BV" "[v['step'] for v in s if v['proposal'] == 2][0]")" accepted
expect broken_later_leaves "$(grep -c 'r1: silu_later_loop leaves the frontier, broken: task silu_later_loop is broken: .*ran over its deadline' "$tmp/be1")" 1
expect broken_later_file "$(jval "$B/frontier/silu_later_loop/broken.json" "s['round'], 'ran over its deadline' in s['why']")" "(1, True)"
expect broken_sizes "$(jval "$B/scorecard.json" "[r['frontier_size'] for r in s['rounds']], [r['frontier_after'] for r in s['rounds']], s['summary']['frontier_final']")" "([1, 1], [2, 1], 1)"
expect broken_proposal_marked "$(ls "$B/proposals/r0/silu_scale/p0" | tr '\n' ' ')" "lineage.json ref.c task.json "
"$KA" scorecard check "$B/scorecard.json" >"$tmp/o" 2>&1
expect broken_scorecard_check "$?" 0
expect broken_bounded "$([ $((t1 - t0)) -le 240 ] && echo yes || echo "$((t1 - t0)) s")" yes
before=$(port=$port2 stats)
brun >"$tmp/b2" 2>"$tmp/be2"
expect broken_rerun_rc "$?" 0
expect broken_rerun_no_requests "$(port=$port2 stats)" "$before"
expect broken_rerun_same "$(jval "$B/scorecard.json" "[r['frontier_size'] for r in s['rounds']], s['summary']['frontier_final']")" "([1, 1], 1)"

# ---- the board ----------------------------------------------------------------
mkdir -p "$tmp/cards"
cp "$SC" "$tmp/cards/frontier.json"
"$KA" board "$tmp/cards" -o "$tmp/site" >"$tmp/o" 2>&1
rc=$?
expect frontier_board_rc "$rc" 0
for title in 'C on the growing frontier per round' 'Frontier size per round' 'Frontier difficulty per round'; do
	expect "frontier_board_plot: $title" "$(grep -qF "$title" "$tmp/site/index.html" && echo drawn)" drawn
done
