#!/usr/bin/env bash
# board_site.sh: `ka board` over the fixtures: the files of the site, every
# board's table, CIs beside figures, HTML escaping of hostile scorecard text,
# kernel sources copied, bad scorecards skipped with one line each, empty
# boards saying so, and the exit codes.
set -u
KA=${KA:-$PWD/${BUILD:-build}/ka}
D=tests/data/scorecards
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }
none() { ! "$@"; }
t() { # name condition-command...
	local name=$1; shift
	if "$@"; then ok "$name"; else no "$name" "$*"; fi
}

"$KA" board $D/good $D/bad -o "$out/site" >"$out/stdout" 2>"$out/stderr"
rc=$?
S=$out/site
t board_exit_ok test "$rc" = 0
t board_summary_line grep -qx "$S/index.html: 14 scorecards, 11 skipped" "$out/stdout"
t board_skip_lines test "$(grep -c '^skipped tests/data/scorecards/bad/' "$out/stderr")" = 11
t board_skip_names_problem grep -qx 'skipped tests/data/scorecards/bad/missing_hash.json: bank.hash: missing' "$out/stderr"
for f in index.html style.css board.js; do t "board_file_$f" test -s "$S/$f"; done
t board_model_pages test "$(ls "$S"/m/*.html | wc -l)" = 14
for id in t-capability t-weight-rsi t-standardized t-harness-rsi t-controls t-procedure-rsi t-frontier t-datasets; do
	t "board_table_$id" grep -q "<table class=\"board\" id=\"$id\">" "$S/index.html"
done
t board_diagnostics_plots test "$(sed -n '/id="diagnostics"/,/<\/section>/p' "$S/index.html" | grep -c '<svg')" = 5
# Diagnostics (schema /2 fixtures): compression and the interruption curve,
# one line per model (llama and deepseek ran the ckpt_frozen arm).
diag=$(sed -n '/id="diagnostics"/,/<\/section>/p' "$S/index.html")
t board_diag_compression grep -q 'Self-data compression ratio' <<<"$diag"
t board_diag_interrupt grep -q 'continued self minus checkpoint-frozen' <<<"$diag"
t board_diag_lines test "$(sed -n '/continued self minus checkpoint-frozen/,/<\/svg>/p' <<<"$diag" | grep -c '<polyline')" = 2
# The standardized board reads the anchor's figures from summary.standardized.
std=$(sed -n '/id="t-standardized"/,/<\/table>/p' "$S/index.html")
t board_std_anchor_cols grep -q '<button type="button">anchor pass</button>' <<<"$std"
t board_std_kept grep -q '>60 of 142</td>' <<<"$std"
t board_std_rows test "$(grep -c '<tr><td' <<<"$std")" = 3
t board_rounds_ckpt grep -q '<td>ckpt_frozen</td>' "$S"/m/*llama-3.1-8b*.html
t board_headers_capability grep -q '<button type="button">Model</button></th><th scope="col" class="" data-type="text" aria-sort="none"><button type="button">Kind</button>' "$S/index.html"
t board_headers_wrsi grep -q '>delta vs frozen</button></th><th scope="col" class="num" data-type="num" aria-sort="descending"><button type="button">self vs fresh-frozen</button>' "$S/index.html"
t board_ci_beside grep -q '<span class="ci"> \[' "$S/index.html"
t board_ci_title grep -q 'title="95% CI \[' "$S/index.html"
t board_no_external none grep -qE '(src|href)="(https?:)?//' "$S/index.html" "$S"/m/*.html
# Hostile text: escaped everywhere, never raw.
t board_escape_raw none grep -q '<script>alert' "$S/index.html" "$S"/m/*.html
t board_escape_name grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$S/index.html"
t board_escape_detail grep -q '&lt;/td&gt;&lt;script&gt;alert(3)&lt;/script&gt;' "$S"/m/*script-alert*.html
t board_escape_spec grep -q 'cmd:./x.sh &quot;&lt;b&gt;&amp;amp;&quot;' "$S"/m/*script-alert*.html
# Kernel sources: copied as .txt next to the page; a missing one is said so.
src=$(ls "$S"/m/000-fable-5.1-capability/*.txt 2>/dev/null | wc -l)
t board_sources_copied test "$src" = 3
t board_source_link grep -q 'href="000-fable-5.1-capability/t0-s0-scale_bias_gelu.s0.cu.txt">source</a>' "$S/m/000-fable-5.1-capability.html"
t board_source_missing grep -q '(source missing)' "$S/m/000-fable-5.1-capability.html"
t board_plots_svg test "$(grep -c '<svg' "$S/index.html")" -ge 10

# Only capability scorecards: the other boards say so.
"$KA" board $D/good/cap_qwen7b.json -o "$out/one" >/dev/null 2>&1
t board_empty_boards test "$(grep -c 'No scorecards for this board yet.' "$out/one/index.html")" = 7
# No valid scorecard at all: still a site, exit 0.
"$KA" board $D/bad/not_json.json -o "$out/none" >/dev/null 2>"$out/none.err"
rc=$?
t board_all_bad_exit test "$rc" = 0
t board_all_bad_site grep -q 'No scorecards for this board yet.' "$out/none/index.html"
# Usage errors.
"$KA" board $D/good >/dev/null 2>&1; t board_usage_no_out test $? = 2
"$KA" board -o "$out/x" >/dev/null 2>&1; t board_usage_no_input test $? = 2
"$KA" board --bogus -o "$out/x" $D/good >/dev/null 2>&1; t board_usage_bad_flag test $? = 2
"$KA" board --help | grep -q '^usage: ka board'; t board_help test $? = 0
# Unwritable output: exit 1.
"$KA" board $D/good -o /proc/ka-board >/dev/null 2>&1; t board_unwritable test $? = 1

# A run on a target without a compiled baseline (OpenCL): the compiled
# columns show a dash, not a rate of 0.
python3 - "$D/good/cap_fable.json" "$out/ocl_in.json" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
sc["target"] = "opencl"
sc["model"]["spec"] = sc["model"]["name"] = "opencl-run"
for t in sc["tasks"]:
    for s in t["samples"]:
        s["speedup_compiled"] = None
json.dump(sc, open(sys.argv[2], "w"))
PY
"$KA" scorecard recompute "$out/ocl_in.json" -o "$out/ocl.json" >/dev/null 2>&1
"$KA" board "$out/ocl.json" -o "$out/site_ocl" >/dev/null 2>&1
cell=$(python3 - "$out/site_ocl/index.html" <<'PY'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
row = next(r for r in re.findall(r"<tr>.*?</tr>", html, re.S) if ">opencl-run</a>" in r)
print(re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[5])  # Model, Kind, correct, fast, mean C, fast vs compiled
PY
)
t board_no_compiled_dash test "$cell" = "—"
