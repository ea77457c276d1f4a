#!/usr/bin/env bash
# bank_export.sh: `ka bank export --format jsonl`: one record per task with
# the documented fields, a dataset card, usage errors, and the file loading
# with datasets.load_dataset("json", ...) (SKIP when the datasets package is
# not installed: tools/setup.sh installs it).
set -u
KA=${KA:-build/ka}
export KA_HOME=${KA_HOME:-$PWD}
PY=${PYTHON:-python3}
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$tmp/bank
mkdir -p "$b/L1" "$b/L2"
cp -r tests/data/tasks_good/add_scale "$b/L1/"
cp -r tests/data/tasks_good/row_dot "$b/L2/"
# row_dot's baselines mirror another form than its torch field (baseline_torch).
sed -i 's|^  "torch": .*|&\n  "baseline_torch": "torch.stack([x.float() @ w.double(), x.float().sum(-1)], -1)",|' \
	"$b/L2/row_dot/task.json"

# Unsplit: split "none"; then split and export again.
"$KA" bank export --format jsonl --bank "$b" -o "$tmp/out0" >"$tmp/log" 2>&1
rc0=$?
"$KA" bank split --bank "$b" >/dev/null 2>&1
"$KA" bank export --format jsonl --bank "$b" -o "$tmp/out" >"$tmp/log" 2>&1
rc=$?
if [ $rc0 -eq 0 ] && [ $rc -eq 0 ] &&
	grep -qF "exported 2 tasks to $tmp/out/tasks.jsonl (card: $tmp/out/README.md)" "$tmp/log" &&
	[ "$(grep -c '' "$tmp/out/tasks.jsonl")" = 2 ] &&
	[ "$(grep -c '"split":"none"' "$tmp/out0/tasks.jsonl")" = 2 ] &&
	[ "$(grep -c '"split":"train"' "$tmp/out/tasks.jsonl")" = 2 ]; then
	pass bank_export_files
else
	fail bank_export_files "exit $rc0/$rc: $(tr '\n' '|' <"$tmp/log")"
fi

# Fields of the add_scale record, literally.
rec=$(grep '"name":"add_scale"' "$tmp/out/tasks.jsonl")
ok=1
for want in '"schema":"ka-task-record/1"' '"tier":"L1"' '"torch":"2.0 * x + y.float()"' \
	'"params":["N"]' \
	'"inputs":[{"name":"x","dtype":"fp32","shape":["N"],"dist":{"kind":"normal","mean":0.0,"std":1.0,"lo":null,"hi":null,"lo_expr":null,"hi_expr":null}},{"name":"y","dtype":"fp16","shape":["N"],"dist":{"kind":"uniform","mean":null,"std":null,"lo":-2.0,"hi":2.0,"lo_expr":null,"hi_expr":null}}]' \
	'"outputs":[{"name":"z","dtype":"fp32","shape":["N"],"per_item":"1"}]' \
	'"bench":[16777216]' '"checks":[[1031],[64]]' '"tolerance":{"atol":1e-6,"rtol":1e-6}' \
	'"libraries":[]' '"min_bytes":"10*N"' '"reference":"/* z[i] = 2*x[i] + y[i] */\n#include \"ka_ref.h\"'; do
	case "$rec" in *"$want"*) ;; *) ok=0; echo "missing: $want" >>"$tmp/miss" ;; esac
done
if [ $ok = 1 ]; then pass bank_export_record; else fail bank_export_record "$(tr '\n' '|' <"$tmp/miss") in $rec"; fi

# baseline_torch: the task's own where it gives one, else its torch field.
rd=$(grep '"name":"row_dot"' "$tmp/out/tasks.jsonl")
case "$rec|$rd" in
*'"baseline_torch":"2.0 * x + y.float()"'*'|'*'"baseline_torch":"torch.stack([x.float() @ w.double(), x.float().sum(-1)], -1)"'*)
	pass bank_export_baseline_torch ;;
*) fail bank_export_baseline_torch "$rec | $rd" ;;
esac

if grep -q '^license: other' "$tmp/out/README.md" && grep -q '^## Fields' "$tmp/out/README.md" &&
	grep -q 'datasets.load_dataset("json", data_files="tasks.jsonl", split="train")' "$tmp/out/README.md" &&
	grep -q 'split counts: train 2, dev 0, none 0' "$tmp/out/README.md"; then
	pass bank_export_card
else
	fail bank_export_card "$(head -20 "$tmp/out/README.md" | tr '\n' '|')"
fi

# Usage errors: each a table row (arguments, message).
while IFS='|' read -r name args want; do
	# shellcheck disable=SC2086
	"$KA" bank export $args >"$tmp/log" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -qF "$want" "$tmp/log"; then
		pass "bank_export_usage_$name"
	else
		fail "bank_export_usage_$name" "exit $rc: $(tr '\n' '|' <"$tmp/log")"
	fi
done <<TABLE
no_format|--bank $b -o $tmp/x|export needs --format jsonl
csv|--format csv --bank $b -o $tmp/x|export needs --format jsonl
no_out|--format jsonl --bank $b|export needs -o OUT
out_is_file|--format jsonl --bank $b -o $tmp/log|exists and is not a folder
no_bank|--format jsonl --bank $tmp/nope -o $tmp/x|$tmp/nope: not a bank folder
TABLE

# An int range given by expressions: lo_expr/hi_expr hold the text, lo/hi
# the numbers where a bound is one (null where it depends on the shape).
mkdir -p "$tmp/ibank/L1"
cp -r tests/data/tasks_index/gather_rows "$tmp/ibank/L1/"
"$KA" bank export --format jsonl --bank "$tmp/ibank" -o "$tmp/iout" >"$tmp/log" 2>&1
if grep -qF '"dist":{"kind":"int","mean":null,"std":null,"lo":0.0,"hi":null,"lo_expr":"0","hi_expr":"V - 1"}' \
	"$tmp/iout/tasks.jsonl"; then
	pass bank_export_index_range
else
	fail bank_export_index_range "$(tr '\n' '|' <"$tmp/log") $(head -c 600 "$tmp/iout/tasks.jsonl" 2>/dev/null)"
fi

# The file loads with the datasets library, every column typed.
if ! "$PY" -c 'import datasets' 2>/dev/null; then
	echo "SKIP bank_export_datasets: python package 'datasets' not installed (bash tools/setup.sh installs it)"
else
	cp "$tmp/out0/tasks.jsonl" "$tmp/out/unsplit.jsonl"
	cp "$tmp/iout/tasks.jsonl" "$tmp/out/index.jsonl"
	if (cd "$tmp/out" && HF_DATASETS_OFFLINE=1 HF_HOME="$tmp/hf" "$PY" - >"$tmp/log" 2>&1) <<'PY'
import datasets
ds = datasets.load_dataset("json", data_files=["tasks.jsonl", "unsplit.jsonl", "index.jsonl"], split="train")
assert ds.num_rows == 5, ds.num_rows
assert sorted(set(ds["name"])) == ["add_scale", "gather_rows", "row_dot"], ds["name"]
assert sorted(ds["split"]) == ["none", "none", "none", "train", "train"], ds["split"]
g = ds[[i for i, n in enumerate(ds["name"]) if n == "gather_rows"][0]]
assert g["inputs"][0]["dist"]["hi_expr"] == "V - 1" and g["inputs"][0]["dist"]["hi"] is None, g["inputs"]
r = ds[[i for i, n in enumerate(ds["name"]) if n == "row_dot"][0]]
assert r["params"] == ["B", "M", "K"], r["params"]
assert r["inputs"][1]["dtype"] == "int32" and r["inputs"][1]["dist"]["lo"] == -3.0, r["inputs"]
assert r["inputs"][1]["dist"]["lo_expr"] == "-3", r["inputs"]
assert r["outputs"][0]["per_item"] == "2", r["outputs"]
assert ds.features["bench"].feature.dtype == "int64", ds.features
print("loaded", ds.num_rows)
PY
	then
		pass bank_export_datasets
	else
		fail bank_export_datasets "$(tail -5 "$tmp/log" | tr '\n' '|')"
	fi
fi
