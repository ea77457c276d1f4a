#!/usr/bin/env bash
# board_check.sh: `ka scorecard check` on every scorecard fixture, with the
# literal line and exit code each must give.
set -u
KA=${KA:-$PWD/${BUILD:-build}/ka}
D=tests/data/scorecards
fail=0
expect() { # name want_rc want_line file...
	local name=$1 want_rc=$2 want=$3; shift 3
	local got rc
	got=$("$KA" scorecard check "$@" 2>&1); rc=$?
	if [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ]; then
		echo "PASS $name"
	else
		echo "FAIL $name: rc $rc (want $want_rc), got: $got"
		echo "   want: $want"
	fi
}
for f in cap_fable cap_qwen7b cap_hostile; do
	expect "scorecard_check_$f" 0 "$D/good/$f.json: ok (schema ka-scorecard/1, track capability, 9 tasks, 45 samples)" "$D/good/$f.json"
done
while read -r f track v; do
	expect "scorecard_check_$f" 0 "$D/good/$f.json: ok (schema ka-scorecard/$v, track $track, 0 tasks, 0 samples)" "$D/good/$f.json"
done <<'LIST'
wrsi_qwen7b weight_rsi 1
wrsi_llama8b weight_rsi 2
wrsi_deepseek weight_rsi 2
std_small weight_rsi 2
std_mid weight_rsi 2
std_large weight_rsi 2
harness_fable harness_rsi 1
controls_qwen7b controls 1
proc_fable procedure_rsi 1
proc_qwen7b procedure_rsi 1
frontier_qwen7b frontier 1
LIST
B=$D/bad
expect scorecard_bad_schema 2 "$B/schema_version.json: schema: expected \"ka-scorecard/1\" or \"ka-scorecard/2\", got \"ka-scorecard/0\"" $B/schema_version.json
expect scorecard_bad_missing 2 "$B/missing_hash.json: bank.hash: missing" $B/missing_hash.json
expect scorecard_bad_type 2 "$B/k_string.json: k: expected an integer, got a string" $B/k_string.json
expect scorecard_bad_enum 2 "$B/verdict_enum.json: tasks[1].samples[2].verdict: \"almost_ok\" is not one of \"no_code\", \"compile_error\", \"forbidden\", \"record_error\", \"launch_error\", \"runtime_fault\", \"timeout\", \"wrong_answer\", \"nonfinite\", \"unwritten_output\", \"input_modified\", \"out_of_bounds_write\", \"implausible_time\", \"ok\"" $B/verdict_enum.json
expect scorecard_bad_aggregates 2 "$B/aggregates.json: aggregates.overall.mean_c.value: 0.30837858714867966 but the samples give 0.29837858714867965" $B/aggregates.json
expect scorecard_bad_score 2 "$B/score.json: tasks[3].samples[1].score: 0.25 but the verdict and speedup_eager give 0.5" $B/score.json
expect scorecard_bad_count 2 "$B/n_samples.json: aggregates.L2.n_samples: 14 but tasks hold 15" $B/n_samples.json
expect scorecard_bad_rsi_verdict 2 "$B/rsi_verdict.json: summary.verdict: \"negative\" but self_minus_fresh [0.0432514, 0.0932514] gives \"positive\"" $B/rsi_verdict.json
expect scorecard_bad_ckpt_v1 2 "$B/ckpt_v1.json: rounds[16].arm: \"ckpt_frozen\" is not an arm of the weight_rsi track in schema ka-scorecard/1" $B/ckpt_v1.json
expect scorecard_bad_self_minus_ckpt 2 "$B/self_minus_ckpt.json: summary.self_minus_ckpt.value: -0.22712532431946286 but rounds (last round, self - ckpt_frozen) give -0.23712532431946287" $B/self_minus_ckpt.json
expect scorecard_bad_json 2 "$B/not_json.json: not JSON: line 2, column 0: unexpected token near end of file" $B/not_json.json
expect scorecard_missing_file 2 "/nonexistent.json: No such file or directory" /nonexistent.json
expect scorecard_usage 2 "ka scorecard: check: missing FILE (see 'ka scorecard --help')" 
