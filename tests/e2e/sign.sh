#!/usr/bin/env bash
# sign.sh: signed scorecards. ka keygen makes a key pair; ka sign writes
# SCORECARD.sig without changing the scorecard; ka verify-signature accepts
# it (and names a trusted signer), and rejects, naming the field, a
# scorecard edited after signing (a changed figure, an added and a removed
# field), a re-indented scorecard is still valid (canonical form), a forged
# block, another key's list. The board marks the verified row with
# KA_TRUSTED_KEYS and only that one.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect() { if [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1: got '$2', want '$3'"; fi; }
SC=tests/data/scorecards/good/cap_qwen7b.json
cp "$SC" "$tmp/sc.json"
"$KA" scorecard check "$tmp/sc.json" >/dev/null 2>&1 || echo "FAIL fixture: $SC does not check"
"$KA" keygen -o "$tmp/maint" --name maintainer >"$tmp/o" 2>&1
expect keygen "$?:$(stat -c %a "$tmp/maint.key"):$(grep -cE '^ed25519 [0-9a-f]{64} maintainer$' "$tmp/maint.pub")" "0:600:1"
"$KA" keygen -o "$tmp/maint" >/dev/null 2>&1
expect keygen_no_overwrite "$?" "1"
"$KA" keygen -o "$tmp/other" >/dev/null 2>&1
before=$(sha256sum <"$tmp/sc.json")
"$KA" sign "$tmp/sc.json" --key "$tmp/maint.key" >"$tmp/o" 2>&1
expect sign "$?:$(sha256sum <"$tmp/sc.json")" "0:$before"
"$KA" verify-signature "$tmp/sc.json" --trusted "$tmp/maint.pub" >"$tmp/o" 2>&1
expect verify_ok "$?:$(grep -c 'signature ok, ed25519 [0-9a-f]* (trusted: maintainer)' "$tmp/o")" "0:1"
"$KA" verify-signature "$tmp/sc.json" --trusted "$tmp/other.pub" >"$tmp/o" 2>&1
expect untrusted_key "$?:$(grep -c 'not trusted' "$tmp/o")" "2:1"

# edit NAME PYTHON-STATEMENT WANT: apply the edit to a copy (s is the JSON),
# keep the signature, and check the rejection names WANT.
edit() {
	python3 -c "import json, sys
s = json.load(open(sys.argv[1]))
$2
json.dump(s, open(sys.argv[2], 'w'), indent=1)" "$tmp/sc.json" "$tmp/e.json"
	cp "$tmp/sc.json.sig" "$tmp/e.json.sig"
	"$KA" verify-signature "$tmp/e.json" >"$tmp/o" 2>&1
	local rc=$?
	if [ "$rc" = 2 ] && grep -qF "rejected: $3" "$tmp/o" && [ "$(wc -l <"$tmp/o")" = 1 ]; then
		echo "PASS $1"
	else echo "FAIL $1: exit $rc: $(head -c 300 "$tmp/o")"; fi
}
edit edited_figure "s['aggregates']['overall']['correct']['value'] = 0.123" "field 'aggregates' changed after signing"
edit edited_sample "s['tasks'][0]['samples'][0]['detail'] = 'x'" "field 'tasks' changed after signing"
edit edited_model "s['model']['name'] = 'better'" "field 'model' changed after signing"
edit added_field "s['note'] = 'x'" "field 'note' was added after signing"
edit removed_field "del s['seed']" "field 'seed' was removed after signing"
# the same content, another layout: still valid
python3 -c "import json, sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], 'w'))" "$tmp/sc.json" "$tmp/flat.json"
cp "$tmp/sc.json.sig" "$tmp/flat.json.sig"
"$KA" verify-signature "$tmp/flat.json" >/dev/null 2>&1
expect canonical_layout "$?" "0"
# a forged block: its field hash edited to match an edited scorecard
python3 - "$tmp/sc.json.sig" "$tmp/forged.sig" <<'PY'
import json, sys
b = json.load(open(sys.argv[1])); b["fields"]["seed"] = "0" * 64
json.dump(b, open(sys.argv[2], "w"))
PY
"$KA" verify-signature "$tmp/sc.json" --sig "$tmp/forged.sig" >"$tmp/o" 2>&1
expect forged_block "$?:$(grep -c 'signature does not match' "$tmp/o")" "2:1"
"$KA" verify-signature "$tmp/sc.json" --sig "$tmp/nope.sig" >"$tmp/o" 2>&1
expect missing_sig "$?:$(wc -l <"$tmp/o")" "2:1"
"$KA" sign "$tmp/sc.json" >"$tmp/o" 2>&1
expect sign_needs_key "$?:$(wc -l <"$tmp/o")" "2:1"

# The board: the signed card is verified, an unsigned copy is not.
mkdir "$tmp/cards"
cp "$tmp/sc.json" "$tmp/sc.json.sig" "$tmp/cards/"
python3 -c "import json, sys
s = json.load(open(sys.argv[1])); s['model']['name'] = 'unsigned-model'
json.dump(s, open(sys.argv[2], 'w'))" "$tmp/sc.json" "$tmp/cards/unsigned.json"
KA_TRUSTED_KEYS="$tmp/maint.pub" "$KA" board "$tmp/cards" -o "$tmp/site" >/dev/null 2>"$tmp/e"
expect board_rc "$?" "0"
expect board_verified_rows "$(grep -o 'class="verified"' "$tmp/site/index.html" | wc -l)" "1"
"$KA" board "$tmp/cards" -o "$tmp/site2" >/dev/null 2>&1
expect board_no_keys_no_mark "$(grep -c 'class="verified"' "$tmp/site2/index.html")" "0"
KA_TRUSTED_KEYS="$tmp/other.pub" "$KA" board "$tmp/cards" -o "$tmp/site3" >/dev/null 2>"$tmp/e"
expect board_untrusted "$(grep -c 'class="verified"' "$tmp/site3/index.html"):$(grep -c '^not verified .*not trusted' "$tmp/e")" "0:1"
