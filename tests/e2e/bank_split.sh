#!/usr/bin/env bash
# bank_split.sh: `ka bank split` (deterministic, stratified, idempotent,
# stable when tasks come and go), `--split` on bank commands, and `ka bank
# check-disjoint` (shared names, renamed references, same torch expression).
set -u
KA=${KA:-build/ka}
export KA_HOME=${KA_HOME:-$PWD}
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# copy_task SRC DST_DIR NAME: a copy of a fixture task under another name.
copy_task() {
	mkdir -p "$(dirname "$2")"
	cp -r "$1" "$2"
	sed -i "0,/\"name\": \"[a-z_0-9]*\"/s//\"name\": \"$3\"/" "$2/task.json"
}
b=$tmp/bank
for n in a1 a2 a3 a4 a5; do copy_task tests/data/tasks_good/add_scale "$b/L1/$n" "$n"; done
for n in d1 d2; do copy_task tests/data/tasks_good/row_dot "$b/L2/$n" "$n"; done

# 1. A fresh split: literal assignment (seed 1, 0.8), both splits in each tier.
"$KA" bank split --bank "$b" >"$tmp/out" 2>&1
rc=$?
want='split 7 tasks (seed 1, train fraction 0.8): 5 train, 2 dev; 7 new, 0 removed'
if [ $rc -eq 0 ] && grep -qF "$want" "$tmp/out" &&
	grep -qx '  "schema": "ka-splits/1",' "$b/splits.json" &&
	[ "$(grep -c '"split": "dev"' "$b/splits.json")" = 2 ] &&
	grep -q '"tier": "L1", "split": "dev"' "$b/splits.json" &&
	grep -q '"tier": "L2", "split": "dev"' "$b/splits.json" &&
	grep -q '"tier": "L2", "split": "train"' "$b/splits.json"; then
	pass bank_split_fresh
else
	fail bank_split_fresh "exit $rc: $(tr '\n' '|' <"$tmp/out") $(tr '\n' '|' <"$b/splits.json")"
fi
grep '"name"' "$b/splits.json" | sed 's/,$//' >"$tmp/first"

# 2. Idempotent: the same bank gives the same bytes.
cp "$b/splits.json" "$tmp/s1"
"$KA" bank split --bank "$b" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && cmp -s "$b/splits.json" "$tmp/s1" && grep -q '; 0 new, 0 removed' "$tmp/out"; then
	pass bank_split_idempotent
else
	fail bank_split_idempotent "exit $rc: $(diff "$tmp/s1" "$b/splits.json" | tr '\n' '|')"
fi

# 3. A task added later is assigned; no other task moves. One removed is dropped.
copy_task tests/data/tasks_good/add_scale "$b/L1/a6" a6
"$KA" bank split --bank "$b" >"$tmp/out" 2>&1
rc=$?
grep '"name"' "$b/splits.json" | sed 's/,$//' | grep -v '"a6"' >"$tmp/second"
if [ $rc -eq 0 ] && grep -q '; 1 new, 0 removed' "$tmp/out" && cmp -s "$tmp/first" "$tmp/second" &&
	grep -q '"name": "a6"' "$b/splits.json"; then
	pass bank_split_add_stable
else
	fail bank_split_add_stable "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi
rm -rf "$b/L1/a6"
"$KA" bank split --bank "$b" >"$tmp/out" 2>&1
if grep -q '; 0 new, 1 removed' "$tmp/out" && cmp -s "$b/splits.json" "$tmp/s1"; then
	pass bank_split_remove
else
	fail bank_split_remove "$(tr '\n' '|' <"$tmp/out")"
fi

# 4. Another seed over an existing record would move tasks: refused.
"$KA" bank split --bank "$b" --seed 5 >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q 'recorded with seed 1 and train fraction 0.8; a different one would move tasks' "$tmp/out"; then
	pass bank_split_seed_conflict
else
	fail bank_split_seed_conflict "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi

# 5. --split selects tasks for list and validate; errors are bad input.
"$KA" bank list --bank "$b" --split dev >"$tmp/out" 2>&1
rc=$?
ndev=$(grep -c '' "$tmp/out")
"$KA" bank list --bank "$b" --split train >"$tmp/out2" 2>&1
ntrain=$(grep -c '' "$tmp/out2")
if [ $rc -eq 0 ] && [ "$ndev" = 2 ] && [ "$ntrain" = 5 ] &&
	! grep -Fxf "$tmp/out" "$tmp/out2" >/dev/null; then
	pass bank_split_filter
else
	fail bank_split_filter "exit $rc, dev $ndev, train $ntrain"
fi
"$KA" bank list --bank "$b" --split test >"$tmp/out" 2>&1
rc1=$?
"$KA" bank list --bank tests/data/tasks_good --split dev >"$tmp/out2" 2>&1
rc2=$?
if [ $rc1 -eq 2 ] && grep -q "unknown split 'test' (train, dev or all)" "$tmp/out" &&
	[ $rc2 -eq 2 ] && grep -q "no splits.json (run 'ka bank split --bank tests/data/tasks_good')" "$tmp/out2"; then
	pass bank_split_filter_errors
else
	fail bank_split_filter_errors "exit $rc1/$rc2: $(cat "$tmp/out" "$tmp/out2" | tr '\n' '|')"
fi

# 6. check-disjoint: a table of second banks and the lines expected.
mkdir -p "$tmp/other/L1"
# Same name as a bank task.
copy_task tests/data/tasks_good/add_scale "$tmp/c1/L1/a1" a1
# Another name, its reference with every name changed and comments changed,
# the torch expression with other tensor names: a near duplicate.
copy_task tests/data/tasks_good/add_scale "$tmp/c2/L1/twice_plus" twice_plus
sed -i -e 's/\bx\b/src/g; s/\bv\b/acc/g; s/z\[i\]/out/; s|^/\*.*\*/$|/* another comment */|' \
	"$tmp/c2/L1/twice_plus/ref.c"
sed -i -e 's/"name": "x"/"name": "p"/; s/2.0 \* x + y.float()/2.0 * p + y.float()/' \
	"$tmp/c2/L1/twice_plus/task.json"
sed -i -e 's/\bx\b/p/g' "$tmp/c2/L1/twice_plus/ref.c"
# A different task altogether.
copy_task tests/data/tasks_good/row_dot "$tmp/c3/L2/other_dot" other_dot
sed -i 's/x.float().sum(-1)], -1)/x.float().sum(-1) * 2], -1)/' "$tmp/c3/L2/other_dot/task.json"
sed -i "s/t += v;/t += 2.0 * v;/" "$tmp/c3/L2/other_dot/ref.c"
while IFS='|' read -r name bank2 want_rc want; do
	"$KA" bank check-disjoint "$b" "$bank2" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq "$want_rc" ] && grep -qE "$want" "$tmp/out"; then
		pass "bank_disjoint_$name"
	else
		fail "bank_disjoint_$name" "exit $rc (want $want_rc): $(tr '\n' '|' <"$tmp/out")"
	fi
done <<TABLE
same_name|$tmp/c1|1|^same name: $b/L1/a1 $tmp/c1/L1/a1\$
renamed_ref|$tmp/c2|1|^same normalised ref.c: $b/L1/a1 $tmp/c2/L1/twice_plus\$
same_torch|$tmp/c2|1|^same normalised torch expression: $b/L1/a5 $tmp/c2/L1/twice_plus\$
counts|$tmp/c2|1|^not disjoint: 7 x 1 tasks, 10 clashes\$
disjoint|$tmp/c3|0|^disjoint: 7 x 1 tasks, 0 clashes\$
TABLE
"$KA" bank check-disjoint "$b" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q 'check-disjoint needs two banks, got 1' "$tmp/out"; then
	pass bank_disjoint_usage
else
	fail bank_disjoint_usage "exit $rc: $(tr '\n' '|' <"$tmp/out")"
fi
