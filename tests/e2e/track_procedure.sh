#!/usr/bin/env bash
# track_procedure.sh: `ka --track procedure` (track 3) and `ka --track
# controls` end to end on PoCL, against tools/fakeserver.py's personas on
# loopback (docs/procedures.md), on a bank of ten copies of the L1 task
# (names differ; the learner answers with the bank's OpenCL solution):
#   (a) learner (solves only once the strategy it proposes after a failure
#       is in the prompt): verdict positive, Q gain CI above 0; the scorecard
#       passes `ka scorecard check` and `ka submit check`; the same command
#       again sends no request and writes the same summary;
#   (b) null (never improves): no gain, verdict "no signal";
#   (c) kill -9 mid-round, then the same command until done: no request
#       repeated for a journaled reply (server count = uninterrupted count +
#       resends of replies lost in flight), the same summary;
#   (d) escaper: six edits (os.execute, io.open, require, string.dump, an
#       endless loop, a 10 GB table) each rejected with its reason, nothing
#       escapes, the run completes;
#   (e) controls: scorecard checked, recursion gain empty without and filled
#       with a weight-RSI scorecard of the same model, refused for another;
#   (f) the board renders both tables and the per-round curves;
#   (g) bad input: one line, exit 2.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
cleanup() {
	exec 3>&- 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
unset OPENAI_API_KEY KA_OPENAI_API_KEY OPENAI_BASE_URL KA_PRICES
export HOME=$tmp
KNOBS=(--target opencl --no-timing --budget 2)

check() { # NAME WANT_RC WANT_TEXT -- command...
	local name=$1 want_rc=$2 want=$3
	shift 4
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	cat "$tmp/err" >>"$tmp/out"
	if [ "$rc" != "$want_rc" ]; then
		echo "FAIL $name: exit $rc, want $want_rc: $(head -c 600 "$tmp/out" | tr '\n' ' ')"
	elif ! grep -qF -- "$want" "$tmp/out"; then
		echo "FAIL $name: output lacks '$want': $(head -c 600 "$tmp/out" | tr '\n' ' ')"
	else
		echo "PASS $name"
	fi
}
one_line() {
	if [ "$(wc -l <"$tmp/err")" = 1 ]; then echo "PASS $1"; else
		echo "FAIL $1: stderr has $(wc -l <"$tmp/err") lines: $(head -c 300 "$tmp/err" | tr '\n' ' ')"
	fi
}
expect() { if [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1: got '$2', want '$3'"; fi; }
# jq-like: FILE PYEXPR (s = the parsed JSON)
jval() { python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
sql() {
	python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall()
print("\n".join("|".join(str(x) for x in row) for row in r))' "$1" "$2"
}
stats() { python3 -c 'import json, sys, urllib.request
print(json.load(urllib.request.urlopen("http://127.0.0.1:%s/_stats" % sys.argv[1]))["requests"])' "$port"; }

# ---- the bank: ten named copies of the L1 task --------------------------------
mkdir -p "$tmp/bank/L1"
for i in 01 02 03 04 05 06 07 08 09 10; do
	cp -r bank/public/L1/gelu_bias_scale "$tmp/bank/L1/gelu_$i"
	sed -i "s/\"name\": \"gelu_bias_scale\"/\"name\": \"gelu_$i\"/" "$tmp/bank/L1/gelu_$i/task.json"
done
BANK=$tmp/bank

mkfifo "$tmp/ctl"
python3 tools/fakeserver.py --bank "$BANK" --exit-on-stdin-eof <"$tmp/ctl" >"$tmp/port" &
exec 3>"$tmp/ctl"
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(head -1 "$tmp/port")
M() { echo "openai:$1@http://127.0.0.1:$port/v1"; }

# ---- (g) bad input -----------------------------------------------------------------
check proc_bad_mode 2 "--mode must be prompt, strategies or full, not 'all'" -- "$KA" --track procedure --model "$(M learner)" --mode all
one_line proc_bad_mode_one_line
check proc_train_alone 2 "--train and --heldout go together" -- "$KA" --track procedure --model "$(M learner)" --train "$BANK"
one_line proc_train_alone_one_line
check proc_overlap 2 "task 'gelu_01' is in both the train and the held-out split" -- "$KA" --track procedure --model "$(M learner)" --train "$BANK" --heldout "$BANK" --out "$tmp/bad" "${KNOBS[@]}"
one_line proc_overlap_one_line
check proc_rounds0 2 "--rounds: '0' is not in 1..1000" -- "$KA" --track procedure --model "$(M learner)" --rounds 0
check ctrl_no_model 2 "--api-model (or --model) is required" -- "$KA" --track controls --budget 2
check proc_help 0 "--rounds N" -- "$KA" --track procedure --help

# ---- (a) the learner: a gain with a CI above 0 ------------------------------------
s0=$(stats)
t0=$(date +%s)
check proc_learner 0 "positive" -- "$KA" --track procedure --model "$(M learner)" --bank "$BANK" --rounds 2 "${KNOBS[@]}" --out "$tmp/learn"
t1=$(date +%s)
echo "learner run: $((t1 - t0)) s"
n_learn=$(($(stats) - s0))
SC=$tmp/learn/scorecard.json
expect proc_learner_verdict "$(jval "$SC" 's["summary"]["verdict"]')" positive
expect proc_learner_ci_above_0 "$(jval "$SC" 's["summary"]["q_gain_vs_frozen"]["lo"] > 0')" True
expect proc_learner_q0 "$(jval "$SC" 's["summary"]["q0"]["value"]')" 0.0
expect proc_learner_edit_accepted "$(jval "$SC" 's["summary"]["edits_accepted"]')" 2
expect proc_learner_rows "$(jval "$SC" 'len(s["rounds"])')" 6
expect proc_learner_budget_equal "$(jval "$SC" 'all(r["budget_used"]["requests"] <= r["budget_allowed"]["requests"] for r in s["rounds"])')" True
check proc_learner_scorecard_check 0 "ok (schema ka-scorecard/1, track procedure_rsi" -- "$KA" scorecard check "$SC"
check proc_learner_submit_check 0 "track:   procedure_rsi" -- "$KA" submit check "$SC" --bank "$BANK"
expect proc_versions_kept "$(ls "$tmp/learn/procedures/self" | grep -c '^r[0-9]$')" 3
if diff -r "$tmp/learn/procedures/self/r0" "$tmp/learn/procedures/self/r1" | grep -q STRATEGY-ERF; then
	echo "PASS proc_versions_diffable"
else
	echo "FAIL proc_versions_diffable: r0 -> r1 shows no strategy"
fi
# the archive holds verified train kernels only: never a held-out task
train_names=$(sql "$tmp/learn/journal.sqlite" "select distinct substr(task, instr(task, 'train/') + 6) from grades where task like 'r%/self/train/%'" | sort | tr '\n' ' ')
arch_names=$(python3 -c 'import json, sys; print(" ".join(sorted(e["task"] for e in json.load(open(sys.argv[1])))))' "$tmp/learn/procedures/self/r2/archive.json")
expect proc_archive_filled "$([ -n "$arch_names" ] && echo yes)" yes
bad=0
for a in $arch_names; do case " $train_names" in *" $a "*) ;; *) bad=1 ;; esac; done
expect proc_archive_train_only "$bad" 0
# the same command again: nothing sent, the same summary
s1=$(stats)
before=$(jval "$SC" 's["summary"]')
"$KA" --track procedure --model "$(M learner)" --bank "$BANK" --rounds 2 "${KNOBS[@]}" --out "$tmp/learn" >/dev/null 2>&1
expect proc_rerun_sends_nothing "$(($(stats) - s1))" 0
expect proc_rerun_same "$(jval "$SC" 's["summary"]')" "$before"
check proc_other_args_refused 2 "holds a different run" -- "$KA" --track procedure --model "$(M learner)" --bank "$BANK" --rounds 3 "${KNOBS[@]}" --out "$tmp/learn"

# ---- (b) the null model: no gain ---------------------------------------------------
check proc_null 0 "no signal" -- "$KA" --track procedure --model "$(M null)" --bank "$BANK" --rounds 2 "${KNOBS[@]}" --out "$tmp/null"
expect proc_null_verdict "$(jval "$tmp/null/scorecard.json" 's["summary"]["verdict"]')" "no signal"
expect proc_null_gain "$(jval "$tmp/null/scorecard.json" 's["summary"]["q_gain_vs_frozen"]["value"]')" 0.0
check proc_null_scorecard_check 0 "ok" -- "$KA" scorecard check "$tmp/null/scorecard.json"

# ---- (c) kill -9 mid-round, then continue ------------------------------------------
s2=$(stats)
kills=0
for delay in 2 4 3; do
	"$KA" --track procedure --model "$(M learner)" --bank "$BANK" --rounds 2 "${KNOBS[@]}" --out "$tmp/kill" >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
	wait "$pid" 2>/dev/null
done
"$KA" --track procedure --model "$(M learner)" --bank "$BANK" --rounds 2 "${KNOBS[@]}" --out "$tmp/kill" >"$tmp/kill.out" 2>&1
expect proc_kill_resumed_rc $? 0
n_kill=$(($(stats) - s2))
resends=$(sql "$tmp/kill/journal.sqlite" "select coalesce(sum(sends - 1), 0) from requests")
expect proc_kill_killed_mid_run "$([ "$kills" -ge 1 ] && echo yes)" yes
expect proc_kill_no_repeat "$n_kill" "$((n_learn + resends))"
expect proc_kill_resends_only_in_flight "$([ "$resends" -le "$kills" ] && echo yes)" yes
expect proc_kill_all_replied "$(sql "$tmp/kill/journal.sqlite" "select count(*) from requests q left join replies r using (task, sample) where r.ok is not 1")" 0
expect proc_kill_same_summary "$(jval "$tmp/kill/scorecard.json" '[s["summary"][k] for k in ("q0", "q_final", "q_gain_vs_frozen", "verdict")]')" "$(jval "$SC" '[s["summary"][k] for k in ("q0", "q_final", "q_gain_vs_frozen", "verdict")]')"

# ---- (d) sandbox escapes in edits ----------------------------------------------------
rm -f "$tmp/escaped"
check proc_escaper 0 "scorecard:" -- "$KA" --track procedure --model "$(M escaper)" --bank "$BANK" --rounds 6 --mode full "${KNOBS[@]}" --budget 1 --out "$tmp/esc"
reasons=$(jval "$tmp/esc/scorecard.json" '"\n".join(r["edit"]["reason"] for r in s["rounds"] if "edit" in r)')
i=0
for want in "global 'os'" "global 'io'" "'require'" "'dump'" "instruction limit" "memory limit"; do
	i=$((i + 1))
	got=$(echo "$reasons" | sed -n "${i}p")
	case "$got" in
	*"$want"*) echo "PASS proc_escape_$i" ;;
	*) echo "FAIL proc_escape_$i: reason '$got' lacks \"$want\"" ;;
	esac
done
expect proc_escapes_all_rejected "$(jval "$tmp/esc/scorecard.json" 's["summary"]["edits_rejected"]')" 6
expect proc_escape_nothing_touched "$([ -e /tmp/ka_escaped ] && echo touched || echo clean)" clean
s3=$(stats)
"$KA" --track procedure --model "$(M escaper)" --bank "$BANK" --rounds 6 --mode full "${KNOBS[@]}" --budget 1 --out "$tmp/esc" >/dev/null 2>&1
expect proc_escaper_rerun_rc $? 0
expect proc_escaper_rerun_sends_nothing "$(($(stats) - s3))" 0
expect proc_escape_old_goes_on "$(jval "$tmp/esc/scorecard.json" 'len({r["procedure"] for r in s["rounds"] if r["arm"] == "self"})')" 1

# ---- (e) controls --------------------------------------------------------------------
check ctrl_run 0 "best_of_k" -- "$KA" --track controls --model "$(M learner)" --bank "$BANK" "${KNOBS[@]}" --out "$tmp/ctrl"
CS=$tmp/ctrl/scorecard.json
check ctrl_scorecard_check 0 "track controls" -- "$KA" scorecard check "$CS"
check ctrl_submit_check 0 "track:   controls" -- "$KA" submit check "$CS" --bank "$BANK"
expect ctrl_gain_empty "$(jval "$CS" 's["summary"]["recursion_gain"]')" None
expect ctrl_equal_budget "$(jval "$CS" 'len({json.dumps(s["summary"]["budget_allowed"])})')" 1
python3 - "$tmp" <<'EOF'
import json, sys
s = json.load(open("tests/data/scorecards/good/wrsi_qwen7b.json"))
s["model"]["name"] = "learner"
json.dump(s, open(sys.argv[1] + "/wrsi_learner.json", "w"))
EOF
check ctrl_rsi_gain 0 "best_of_k" -- "$KA" --track controls --model "$(M learner)" --bank "$BANK" "${KNOBS[@]}" --out "$tmp/ctrl2" --rsi-scorecard "$tmp/wrsi_learner.json"
expect ctrl_rsi_gain_value "$(jval "$tmp/ctrl2/scorecard.json" 'round(s["summary"]["recursion_gain"]["value"] - (s["summary"]["weight_rsi_c"]["value"] - max(s["summary"][k]["value"] for k in ("best_of_k", "self_refine", "retrieval"))), 12)')" 0.0
check ctrl_rsi_gain_check 0 "track controls" -- "$KA" scorecard check "$tmp/ctrl2/scorecard.json"
check ctrl_rsi_other_model 2 "is of model 'Qwen2.5-Coder-7B" -- "$KA" --track controls --model "$(M learner)" --bank "$BANK" "${KNOBS[@]}" --out "$tmp/ctrl3" --rsi-scorecard tests/data/scorecards/good/wrsi_qwen7b.json
one_line ctrl_rsi_other_model_one_line

# ---- (f) the board ---------------------------------------------------------------------
check board_both 0 "3 scorecards, 0 skipped" -- "$KA" board "$SC" "$CS" "$tmp/ctrl2/scorecard.json" -o "$tmp/site"
expect board_procedure_table "$(grep -o 'learner-procedure_rsi.html' "$tmp/site/index.html" | wc -l | tr -d ' ')" 1
expect board_controls_rows "$(grep -o 'learner-controls.html' "$tmp/site/index.html" | wc -l | tr -d ' ')" 2
expect board_q_curve_points "$(grep -o 'learner, round [0-9]: ' "$tmp/site/index.html" | sort -u | tr '\n' ' ')" "learner, round 0:  learner, round 1:  learner, round 2:  "
