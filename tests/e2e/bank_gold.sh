#!/usr/bin/env bash
# bank_gold.sh: `ka gold` writes .npy gold (float64) and inputs; the files
# are checked against an independent NumPy computation when NumPy is there;
# the same seed gives the same bytes; bad input is one line, exit 2 and
# nothing written.
set -u
KA=${KA:-build/ka}
export KA_HOME=${KA_HOME:-$PWD}
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$KA" gold --task tests/data/tasks_good/row_dot --shape "B=3,M=37,K=45" --seed 7 -o "$tmp/a" --inputs >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -f "$tmp/a/out.npy" ] && [ -f "$tmp/a/x.npy" ] && [ -f "$tmp/a/w.npy" ] &&
	[ "$(wc -l <"$tmp/out")" -eq 3 ]; then
	pass gold_writes_npy
else
	fail gold_writes_npy "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

if python3 -c 'import numpy' 2>/dev/null; then
	if python3 - "$tmp/a" <<'PY' >"$tmp/py" 2>&1; then
import sys, numpy as np
d = sys.argv[1]
x, w, out = (np.load(f"{d}/{n}.npy") for n in ("x", "w", "out"))
assert x.dtype == np.uint16 and x.shape == (3, 37, 45), (x.dtype, x.shape)   # bf16 bits as <u2
assert w.dtype == np.int32 and w.shape == (45,)
assert out.dtype == np.float64 and out.shape == (3, 37, 2)
xf = (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
want = np.stack([(xf * w).sum(-1), xf.sum(-1)], -1)
err = np.abs(want - out).max() / np.abs(want).max()
assert err < 1e-12, err
assert w.min() >= -3 and w.max() <= 3
PY
		pass gold_matches_numpy
	else
		fail gold_matches_numpy "$(tail -1 "$tmp/py")"
	fi
else
	echo "SKIP gold_matches_numpy: no python3 with numpy"
fi

# Same seed, same bytes; another seed, other inputs. Default shape = checks[0].
"$KA" gold --task tests/data/tasks_good/row_dot --seed 7 -o "$tmp/b" --inputs >/dev/null 2>&1
"$KA" gold --task tests/data/tasks_good/row_dot --seed 8 -o "$tmp/c" --inputs >/dev/null 2>&1
if cmp -s "$tmp/a/out.npy" "$tmp/b/out.npy" && cmp -s "$tmp/a/x.npy" "$tmp/b/x.npy" &&
	! cmp -s "$tmp/a/x.npy" "$tmp/c/x.npy"; then
	pass gold_deterministic
else
	fail gold_deterministic "seed 7 twice differs, or seed 8 equals seed 7"
fi

# Bad input: exit 2, one line, nothing written.
check_bad() { # name want_text args...
	local name=$1 text=$2; shift 2
	rm -rf "$tmp/bad"
	"$KA" gold "$@" >"$tmp/out" 2>&1
	local rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] && grep -qxF -- "$text" "$tmp/out" && [ ! -e "$tmp/bad" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(tr '\n' '|' <"$tmp/out")"
	fi
}
check_bad gold_bad_dtype "ka gold: tests/data/tasks_bad/unknown_dtype/task.json: inputs[1].dtype: unknown dtype 'fp8'" \
	--task tests/data/tasks_bad/unknown_dtype -o "$tmp/bad"
check_bad gold_bad_ref "ka gold: tests/data/tasks_bad/ref_compile_error/ref.c: does not compile as C: tests/data/tasks_bad/ref_compile_error/ref.c:7:20: error: 'undeclared_thing' undeclared (first use in this function)" \
	--task tests/data/tasks_bad/ref_compile_error -o "$tmp/bad"
check_bad gold_bad_shape "ka gold: --shape: shape 'B=3,M=37': missing parameter 'K'" \
	--task tests/data/tasks_good/row_dot --shape B=3,M=37 -o "$tmp/bad"
check_bad gold_bad_seed "ka gold: --seed: '-1' is not an unsigned 64-bit integer (see 'ka gold --help')" \
	--task tests/data/tasks_good/row_dot --seed -1 -o "$tmp/bad"
check_bad gold_missing_out "ka gold: missing -o OUTDIR (see 'ka gold --help')" \
	--task tests/data/tasks_good/row_dot
check_bad gold_unknown_flag "ka gold: unknown option '--frob' (see 'ka gold --help')" \
	--frob --task tests/data/tasks_good/row_dot -o "$tmp/bad"
if "$KA" gold --help | grep -q '^usage: ka gold --task DIR'; then pass gold_help; else fail gold_help "no usage line"; fi
