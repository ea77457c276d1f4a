#!/usr/bin/env bash
# The lazy gold (timed calls' checks, ref.c built as C++) against the C gold,
# through the whole grader on OpenCL/PoCL. A benchmark shape of 2 M elements
# is checked on a sample, so timed calls use the lazy gold:
#  - with the fixture task add_scale, a correct candidate grades ok and the
#    once-per-grade cross-check finds nothing to say;
#  - with a ref.c that is valid C and C++ but means different things in each
#    (sizeof('a') is 4 in C, 1 in C++), the cross-check catches it, says so
#    on stderr, and the C gold decides: the candidate still grades ok.
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/ka-run-opencl" ] || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP grade_lazy_gold: no OpenCL runner or platform"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null; }
grade() { # task-dir name
	"$KA" grade --task "$1" --target opencl --kernel tests/data/grade_dtypes/add_scale.c \
		--bench-shape N=2000000 --min-samples 5 --max-samples 5 --workdir "$tmp/w" \
		--json "$tmp/$2.json" >"$tmp/$2.log" 2>"$tmp/$2.err"
}
grade tests/data/tasks_good/add_scale same
rc=$?
got=$(verdict_of "$tmp/same.json")
if [ "$rc" -eq 0 ] && [ "$got" = ok ] && ! grep -q "lazy gold differs" "$tmp/same.err"; then
	echo "PASS grade_lazy_gold/agrees"
else
	echo "FAIL grade_lazy_gold/agrees: exit $rc, verdict '${got:-none}': $(tail -c 400 "$tmp/same.err" | tr '\n' ' ')"
fi
mkdir -p "$tmp/task"
cp tests/data/tasks_good/add_scale/task.json "$tmp/task/"
cat >"$tmp/task/ref.c" <<'REF'
/* z = 2*x + y in C; sizeof('a') is 1 in C++, so the C++ build says 0.5*x + y */
#include "ka_ref.h"
KA_FN void ref(ka_i64 item, ka_i64 N, KA_IN(float) x, KA_IN(ka_half) y, KA_OUT(float) z)
{
	(void)N;
	z[item] = ((double)sizeof('a') / 2.0) * (double)x[item] + KA_LD_F16(y, item);
}
REF
grade "$tmp/task" differs
rc=$?
got=$(verdict_of "$tmp/differs.json")
if [ "$rc" -eq 0 ] && [ "$got" = ok ] && grep -q "lazy gold differs from the C gold" "$tmp/differs.err"; then
	echo "PASS grade_lazy_gold/cross_check"
else
	echo "FAIL grade_lazy_gold/cross_check: exit $rc, verdict '${got:-none}': $(tail -c 400 "$tmp/differs.err" | tr '\n' ' ')"
fi
# Several grades in one session. The generator and lazy-gold checks on whole
# inputs are made once per session, task and shape; later grades check their
# untimed benchmark call with the lazy gold. So: (1) where the lazy gold
# differs, no later grade may use it: the same correct candidate twice
# grades ok twice; (2) where it agrees, a candidate wrong only at the
# benchmark shape (every element from 1 M on), graded after a correct one,
# is still wrong_answer.
sed -e 's/z\[i\] = 2.0f \* x\[i\]/z[i] = (i >= 1000000 ? 3.0f : 2.0f) * x[i]/' \
	-e 's|/\* expect: ok|/* expect: wrong_answer at the benchmark shape|' \
	tests/data/grade_dtypes/add_scale.c >"$tmp/wrong_big.c"
# many TEST WANT TASK-DIR KERNEL...: grade the kernels in one session; PASS
# when ka exits 0 and the verdicts, in order, are WANT.
many() {
	local name=$1 want=$2 dir=$3
	shift 3
	local ks=()
	for k in "$@"; do ks+=(--kernel "$k"); done
	"$KA" grade --task "$dir" --target opencl "${ks[@]}" --bench-shape N=2000000 --min-samples 5 \
		--max-samples 5 --workdir "$tmp/w" --json "$tmp/$name.jsonl" >"$tmp/$name.log" 2>"$tmp/$name.err"
	local rc=$?
	local got
	got=$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["verdict"] for l in open(sys.argv[1])))' \
		"$tmp/$name.jsonl" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
		echo "PASS grade_lazy_gold/$name"
	else
		echo "FAIL grade_lazy_gold/$name: exit $rc, verdicts '${got:-none}': $(tail -c 400 "$tmp/$name.err" | tr '\n' ' ')"
	fi
}
many differs_session "ok ok" "$tmp/task" tests/data/grade_dtypes/add_scale.c tests/data/grade_dtypes/add_scale.c
many checked_once_per_session "ok wrong_answer ok" tests/data/tasks_good/add_scale tests/data/grade_dtypes/add_scale.c \
	"$tmp/wrong_big.c" tests/data/grade_dtypes/add_scale.c
