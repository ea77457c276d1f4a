#!/usr/bin/env bash
# board_submit.sh: `ka submit check` on fixtures: a bad scorecard (exit 2,
# the one line), a public scorecard whose bank hash does not match the public
# bank (exit 1, both hashes), the same with the right hash (exit 0, the
# maintainer block and re-run command), a held-out scorecard (warning).
set -u
KA=${KA:-$PWD/${BUILD:-build}/ka}
D=tests/data/scorecards
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
t() { local name=$1; shift; if "$@"; then echo "PASS $name"; else echo "FAIL $name: $*"; fi; }

# A tiny public bank of our own (empty: its hash is still defined).
mkdir -p "$out/bank"
"$KA" submit check $D/bad/aggregates.json --bank "$out/bank" >"$out/o1" 2>&1
t submit_bad_exit test $? = 2
t submit_bad_line grep -qx "$D/bad/aggregates.json: aggregates.overall.mean_c.value: 0.30837858714867966 but the samples give 0.29837858714867965" "$out/o1"

"$KA" submit check $D/good/cap_qwen7b.json --bank "$out/bank" >"$out/o2" 2>&1
t submit_mismatch_exit test $? = 1
t submit_mismatch_line grep -q "^bank hash: 9f2c4e1a7b3d5f609f2c4e1a7b3d5f60 does not match the public bank at $out/bank (0 tasks, hash [0-9a-f]\{16\})" "$out/o2"
hash=$(sed -n 's/.*(0 tasks, hash \([0-9a-f]\{16\}\)).*/\1/p' "$out/o2")

python3 - "$D/good/cap_qwen7b.json" "$out/sc.json" "$hash" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["bank"]["hash"] = sys.argv[3]
json.dump(d, open(sys.argv[2], "w"))
PY
"$KA" submit check "$out/sc.json" --bank "$out/bank" >"$out/o3" 2>&1
t submit_ok_exit test $? = 0
t submit_ok_schema grep -qx "$out/sc.json: ok (schema ka-scorecard/1, track capability, 9 tasks, 45 samples, aggregates recomputed)" "$out/o3"
t submit_ok_split grep -qx "split: public (maintainers re-run it on held-out)" "$out/o3"
t submit_ok_hash grep -qx "bank hash: $hash matches the public bank at $out/bank (0 tasks)" "$out/o3"
t submit_ok_rerun grep -qxF "  re-run:  ka --track capability --api-model 'openai:Qwen/Qwen2.5-Coder-7B-Instruct@http://127.0.0.1:8000/v1' --k 5 --bank <HELDOUT> --target cuda" "$out/o3"
t submit_ok_device grep -qx "  device:  NVIDIA H200 (driver 570.86.15, CUDA 12.8)" "$out/o3"

"$KA" submit check $D/good/cap_fable.json --bank "$out/bank" >"$out/o4" 2>&1
t submit_heldout_exit test $? = 0
t submit_heldout_warning grep -q "^warning: split is heldout: only maintainers score the held-out split" "$out/o4"
"$KA" submit check $D/good/cap_fable.json --maintainer --bank "$out/bank" >"$out/o5" 2>&1
t submit_maintainer grep -qx "split: heldout (maintainer run)" "$out/o5"

# Hostile spec: quoted as one shell word.
"$KA" submit check $D/good/cap_hostile.json >"$out/o6" 2>&1
t submit_quoted grep -qF -e "--api-model 'cmd:./x.sh \"<b>&amp;\"' --k 5" "$out/o6"

"$KA" submit check >/dev/null 2>&1; t submit_usage test $? = 2
"$KA" submit check a.json b.json >/dev/null 2>&1; t submit_usage_two test $? = 2
"$KA" submit --help | grep -q '^usage: ka submit check'; t submit_help test $? = 0
