#!/usr/bin/env bash
# cli_errors.sh: bad input across the CLI, as a user meets it: unknown flags,
# missing arguments, files that do not exist, a folder where a file is
# expected (and the reverse), empty files. Each row: the exit code (literal),
# a fragment the output must hold, and the arguments. Exit 2 must come with
# exactly one line. An empty kernel is a candidate's failure, not bad input:
# a verdict with exit 0.
set -u
KA=${KA:-build/ka}
if [ ! -x "$KA" ]; then
	echo "SKIP cli_errors: $KA not built"; exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
E=$tmp/empty.txt D=$tmp/emptydir O=$tmp/out N=/nonexistent/x
: >"$E"; mkdir -p "$D"
T=bank/public/L1/gelu_bias_scale
SC=tests/data/scorecards/good/cap_qwen7b.json

# name | exit | fragment | arguments (word-split; no spaces inside one)
rows="
top_none            |2|ka: missing command|
top_unknown         |2|ka: unknown command 'frob'|frob
bank_bad_flag       |2|ka bank: unknown option '--bogus'|bank --bogus
bank_no_action      |2|ka bank: missing action|bank
bank_bad_action     |2|unknown action 'frob'|bank frob
bank_no_value       |2|option '--bank' needs a value|bank list --bank
bank_list_missing   |2|$N: no such task folder|bank list $N
bank_show_file      |2|$E: no such task folder|bank show $E
bank_validate_empty |2|$D: no task folder in it|bank validate $D
gold_bad_flag       |2|ka gold: unknown option '--bogus'|gold --bogus
gold_no_task        |2|missing --task DIR|gold
gold_task_missing   |2|$N/task.json: No such file or directory|gold --task $N -o $O
gold_task_file      |2|$E/task.json: Not a directory|gold --task $E -o $O
gold_task_emptydir  |2|$D/task.json: No such file or directory|gold --task $D -o $O
gold_no_out         |2|missing -o OUTDIR|gold --task $T
gold_out_file       |2|-o $E: exists and is not a folder|gold --task $T -o $E
gold_bad_shape      |2|unknown parameter 'Q'|gold --task $T --shape Q=1 -o $O
grade_bad_flag      |2|ka grade: unknown option '--bogus'|grade --bogus
grade_no_task       |2|--task is required|grade
grade_no_kernel     |2|--kernel is required|grade --task $T
grade_bad_target    |2|--target must be opencl or cuda, not 'bogus'|grade --task $T --target bogus --kernel $E
grade_kernel_missing|2|$N: No such file or directory|grade --task $T --target opencl --kernel $N
grade_kernel_dir    |2|$D: not a regular file|grade --task $T --target opencl --kernel $D
grade_task_missing  |2|$N/task.json: No such file or directory|grade --task $N --target opencl --kernel $E
prompt_bad_flag     |2|ka prompt: unknown option '--bogus'|prompt --bogus
prompt_no_task      |2|a task name or folder is required|prompt
prompt_missing      |2|$N: no such task folder|prompt $N
prompt_emptydir     |2|$D: no task folder in it|prompt $D
prompt_bad_target   |2|--target must be cuda or opencl, not 'bogus'|prompt gelu_bias_scale --target bogus
prompt_tmpl_missing |2|$N: No such file or directory|prompt gelu_bias_scale --template $N
prompt_tmpl_dir     |2|$D: not a regular file|prompt gelu_bias_scale --template $D
prompt_tmpl_empty   |2|$E: the template is empty|prompt gelu_bias_scale --template $E
model_none          |2|ka model: missing subcommand|model
model_bad_sub       |2|unknown subcommand '--bogus'|model --bogus
model_no_spec       |2|missing SPEC|model test
model_bad_flag      |2|ka model test: unknown option '--bogus'|model test --bogus
model_bad_backend   |2|unknown backend 'bogus'|model test bogus:x
model_prompt_missing|2|$N: No such file or directory|model test openai:x --prompt-file $N
model_prompt_empty  |2|$E: the prompt file is empty|model test openai:x --prompt-file $E
model_prompt_dir    |2|$D: not a regular file|model test openai:x --prompt-file $D
model_archive_gone  |2|bank path '$N' is not a folder|model test archive:$N
scorecard_none      |2|ka scorecard: missing action|scorecard
scorecard_bad_action|2|unknown action 'frob'|scorecard frob x
scorecard_bad_flag  |2|ka scorecard: unknown option '--bogus'|scorecard check --bogus x
scorecard_no_file   |2|missing FILE|scorecard check
scorecard_missing   |2|$N: No such file or directory|scorecard check $N
scorecard_empty     |2|$E: not JSON|scorecard check $E
scorecard_dir       |2|$D: not a regular file|scorecard check $D
board_bad_flag      |2|ka board: unknown option '--bogus'|board --bogus
board_no_out        |2|missing -o DIR|board
board_no_input      |2|missing SCORECARD|board -o $O
board_input_missing |2|ka board: $N: No such file or directory|board -o $O $N
board_out_file      |2|-o $E: exists and is not a folder|board -o $E $SC
submit_none         |2|ka submit: missing action|submit
submit_bad_action   |2|unknown action '--bogus'|submit --bogus
submit_no_file      |2|check needs exactly one SCORECARD|submit check
submit_two_files    |2|check needs exactly one SCORECARD|submit check $SC $SC
submit_bad_flag     |2|ka submit: unknown option '--bogus'|submit check --bogus $SC
submit_missing      |2|$N: No such file or directory|submit check $N
submit_empty        |2|$E: not JSON|submit check $E
submit_dir          |2|$D: not a regular file|submit check $D
submit_bank_missing |2|ka submit: $N: No such file or directory|submit check $SC --bank $N
submit_bank_file    |2|ka submit: $E: not a folder|submit check $SC --bank $E
track_none          |2|a track name is required|--track
track_unknown       |2|unknown track 'bogus'|--track bogus
track_bad_flag      |2|ka --track: unknown option '--bogus'|--track capability --bogus
track_no_model      |2|--api-model (or --model) is required|--track capability
grade_empty_kernel  |0|no_code|grade --task $T --target opencl --kernel $E
grade_jobs_neg      |2|ka grade: --jobs: '-1' is not in 0..1024|grade --jobs -1
grade_jobs_hex      |2|ka grade: --jobs: '0x4' is not in 0..1024|grade --jobs 0x4
grade_device_nan    |2|ka grade: --device: 'nan' is not in 0..64|grade --device nan
grade_device_empty  |2|ka grade: --device: '' is not in 0..64|grade --device=
track_k_nan         |2|ka --track: --k: 'nan' is not in 1..1000|--track capability --k nan
track_k_inf         |2|ka --track: --k: 'inf' is not in 1..1000|--track capability --k inf
track_k_1e999       |2|ka --track: --k: '1e999' is not in 1..1000|--track capability --k 1e999
track_k_neg         |2|ka --track: --k: '-2' is not in 1..1000|--track capability --k -2
track_k_empty       |2|ka --track: --k: '' is not in 1..1000|--track capability --k=
track_k_garbage     |2|ka --track: --k: '3x' is not in 1..1000|--track capability --k 3x
track_k_hex         |2|ka --track: --k: '0x3' is not in 1..1000|--track capability --k 0x3
track_temp_nan      |2|ka --track: --temperature: 'nan' is not in [0, 2]|--track capability --temperature nan
track_temp_neg      |2|ka --track: --temperature: '-0.5' is not in [0, 2]|--track capability --temperature -0.5
track_seed_neg      |2|ka --track: --seed: '-1' is not in 0..|--track capability --seed -1
track_conc_empty    |2|ka --track: --concurrency: '' is not in 1..1024|--track capability --concurrency=
model_temp_nan      |2|ka model test: --temperature: 'nan' is not in [0, 2]|model test cmd:cat --temperature nan
model_temp_neg      |2|ka model test: --temperature: '-0.5' is not in [0, 2]|model test cmd:cat --temperature -0.5
model_top_p_inf     |2|ka model test: --top-p: 'inf' is not in [0, 1]|model test cmd:cat --top-p inf
model_seed_neg      |2|ka model test: --seed: '-1' is not in 0..|model test cmd:cat --seed -1
model_timeout_nan   |2|ka model test: --timeout: 'nan' is not a number > 0|model test cmd:cat --timeout nan
model_timeout_zero  |2|ka model test: --timeout: '-0' is not a number > 0|model test cmd:cat --timeout -0
model_sample_empty  |2|ka model test: --sample: '' is not in 0..1000000|model test cmd:cat --sample=
model_retries_big   |2|ka model test: --retries: '1e999' is not in 0..100|model test cmd:cat --retries 1e999
gold_seed_hex       |2|ka gold: --seed: '0x10' is not an unsigned 64-bit integer|gold --task $T -o $O --seed 0x10
gold_seed_empty     |2|ka gold: --seed: '' is not an unsigned 64-bit integer|gold --task $T -o $O --seed=
gold_seed_big       |2|ka gold: --seed: '18446744073709551616' is not an unsigned 64-bit integer|gold --task $T -o $O --seed 18446744073709551616
"

# The timing options `ka grade` and the tracks share: the same value gets the
# same answer and the same message from both (after "ka <command>: ").
# name | option=value (or option value) | message
shared="
max_seconds_nan     |--max-seconds nan|--max-seconds: 'nan' is not in (0, 3600]
max_seconds_inf     |--max-seconds inf|--max-seconds: 'inf' is not in (0, 3600]
max_seconds_1e999   |--max-seconds 1e999|--max-seconds: '1e999' is not in (0, 3600]
max_seconds_neg     |--max-seconds -1|--max-seconds: '-1' is not in (0, 3600]
max_seconds_zero    |--max-seconds -0|--max-seconds: '-0' is not in (0, 3600]
max_seconds_empty   |--max-seconds=|--max-seconds: '' is not in (0, 3600]
max_seconds_garbage |--max-seconds 3x|--max-seconds: '3x' is not in (0, 3600]
max_seconds_hex     |--max-seconds 0x10|--max-seconds: '0x10' is not in (0, 3600]
min_samples_nan     |--min-samples nan|--min-samples: 'nan' is not in 1..500
min_samples_inf     |--min-samples inf|--min-samples: 'inf' is not in 1..500
min_samples_1e999   |--min-samples 1e999|--min-samples: '1e999' is not in 1..500
min_samples_neg     |--min-samples -5|--min-samples: '-5' is not in 1..500
min_samples_empty   |--min-samples=|--min-samples: '' is not in 1..500
min_samples_real    |--min-samples 2.5|--min-samples: '2.5' is not in 1..500
max_samples_nan     |--max-samples nan|--max-samples: 'nan' is not in 1..100000
max_samples_neg     |--max-samples -1|--max-samples: '-1' is not in 1..100000
max_samples_empty   |--max-samples=|--max-samples: '' is not in 1..100000
max_samples_big     |--max-samples 100001|--max-samples: '100001' is not in 1..100000
min_above_max       |--min-samples 50 --max-samples 40|--min-samples is above --max-samples
"
for cmd in grade track; do
	case $cmd in
	grade) pre="grade --task $T --kernel $E" prefix="ka grade: " ;;
	track) pre="--track capability --model archive:bank/public --out $O" prefix="ka --track: " ;;
	esac
	while IFS='|' read -r name opt frag; do
		name=$(echo "$name" | tr -d ' ')
		[ -n "$name" ] || continue
		rows="$rows
${cmd}_$name|2|$prefix$frag|$pre $opt"
	done <<<"$shared"
done

while IFS='|' read -r name want frag args; do
	name=$(echo "$name" | tr -d ' ')
	[ -n "$name" ] || continue
	if [ "$name" = grade_empty_kernel ] && [ ! -x "$(dirname "$KA")/ka-run-opencl" ]; then
		echo "SKIP cli_$name: no OpenCL runner in this build"; continue
	fi
	# shellcheck disable=SC2086
	out=$("$KA" $args 2>&1 </dev/null); rc=$?
	lines=$(printf '%s\n' "$out" | grep -c .)
	if [ "$rc" != "$want" ]; then
		echo "FAIL cli_$name: exit $rc, want $want: $(printf '%s' "$out" | head -3 | tr '\n' ' ')"
	elif ! grep -qF -- "$frag" <<<"$out"; then
		echo "FAIL cli_$name: output lacks '$frag': $(printf '%s' "$out" | head -3 | tr '\n' ' ')"
	elif [ "$want" = 2 ] && [ "$lines" != 1 ]; then
		echo "FAIL cli_$name: $lines lines, want one: $(printf '%s' "$out" | head -3 | tr '\n' ' ')"
	else
		echo "PASS cli_$name"
	fi
done <<<"$rows"
