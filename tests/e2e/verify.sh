#!/usr/bin/env bash
# verify.sh: `ka verify SCORECARD --bank HELDOUT`. A capability scorecard of
# the archive model on a small public bank is re-run on a second bank folder
# (held-out stand-in: three other L1 tasks) with the scorecard's settings:
# the held-out scorecard has split heldout, the submission's model, k, seed,
# target and timing protocol, the held-out bank's tasks; the side-by-side
# table shows both. Bad input: one line, exit 2.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect() { if [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1: got '$2', want '$3'"; fi; }
mkdir -p "$tmp/pub/L1" "$tmp/held/L1"
for t in gelu_tanh mish; do cp -r "bank/public/L1/$t" "$tmp/pub/L1/"; done
for t in row_sum row_max softplus; do cp -r "bank/public/L1/$t" "$tmp/held/L1/"; done
"$KA" --track capability --api-model archive:bank/public --bank "$tmp/pub" --k 2 --seed 7 \
	--target opencl --max-seconds 0.2 --min-samples 3 --max-samples 6 --out "$tmp/sub" --quiet >/dev/null 2>&1
expect submission "$?" "0"

"$KA" verify "$tmp/sub/scorecard.json" --bank "$tmp/held" --out "$tmp/v" >"$tmp/o" 2>"$tmp/e"
expect verify_rc "$?" "0"
python3 - "$tmp/sub/scorecard.json" "$tmp/v/scorecard.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def check(name, got, want):
    print(f"PASS {name}" if got == want else f"FAIL {name}: got {got!r}, want {want!r}")
check("heldout_split", b["bank"]["split"], "heldout")
check("heldout_tasks", sorted(t["name"] for t in b["tasks"]), ["row_max", "row_sum", "softplus"])
for k in ("model", "k", "seed", "target"):
    check(f"same_{k}", b[k], a[k])
for k in ("min_samples", "max_samples", "max_seconds"):
    check(f"same_protocol_{k}", b["protocol"][k], a["protocol"][k])
check("heldout_samples", sum(len(t["samples"]) for t in b["tasks"]), 6)
PY
expect table_header "$(grep -c 'submitted .*held-out re-run' "$tmp/o")" "1"
expect table_tasks "$(grep -cE '^  tasks / samples +2 / 4 +3 / 6$' "$tmp/o")" "1"
expect table_split "$(grep -cE '^  bank +public [0-9a-f]{16} +heldout [0-9a-f]{16}$' "$tmp/o")" "1"
expect table_correct "$(grep -cE '^  correct +1\.000 \[1\.000, 1\.000\] +1\.000 \[1\.000, 1\.000\]$' "$tmp/o")" "1"
expect said_settings "$(grep -c 'k 2, seed 7, target opencl, tier L1' "$tmp/e")" "1"
"$KA" scorecard check "$tmp/v/scorecard.json" >/dev/null 2>&1
expect heldout_check "$?" "0"

"$KA" verify "$tmp/sub/scorecard.json" >"$tmp/o" 2>&1
expect no_bank "$?:$(wc -l <"$tmp/o")" "2:1"
"$KA" verify "$tmp/nope.json" --bank "$tmp/held" >"$tmp/o" 2>&1
expect missing_scorecard "$?:$(wc -l <"$tmp/o")" "2:1"
echo '{"schema":"ka-scorecard/1"}' >"$tmp/bad.json"
"$KA" verify "$tmp/bad.json" --bank "$tmp/held" >"$tmp/o" 2>&1
expect bad_scorecard "$?:$(wc -l <"$tmp/o")" "2:1"
