#!/usr/bin/env bash
# boxed_gold.sh: the gold of a task that is not trusted bank code (its folder
# holds lineage.json: a frontier proposal's, written by a model) is computed
# in ka-goldbox, never in ka (docs/grader.md, "Gold that is not bank code").
#  - same: a copy of silu_scale marked model-written grades as the trusted
#    copy does (verdict, how each call was checked), with timing too;
#    `ka bank validate` and `ka gold` give the same line and the same bytes;
#  - broken: the reference changed at one item that only the benchmark shape
#    has (R=1,C=70001; the check shapes stop at 65661 items, so validation
#    never reaches it): looping (almost) forever there, writing far past its
#    output there, or NaN there. Each `ka grade` exits 2 within the box's
#    deadline with one line "task silu_scale is broken: ..." naming what
#    happened, the shape and the items, and writes no result. In ka (the
#    same folders without lineage.json, trusted) the first hangs ka, the
#    second kills it, the third gives the candidate a wrong_answer.
set -u
. tests/e2e/lib/kill_helper.sh
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/ka-run-opencl" ] || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP boxed_gold: no OpenCL runner or platform"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp
expect() { if [ "$2" = "$3" ]; then echo "PASS boxed_gold/$1"; else echo "FAIL boxed_gold/$1: got '$2', want '$3'"; fi; }
T=bank/public/L1/silu_scale
K=$T/solutions/opencl.c
task() { # name [ref.c edit: python replacing the line "\ty[item] = r;"]
	mkdir -p "$tmp/$1"
	cp -r "$T" "$tmp/$1/silu_scale"
	echo '{"parent": "silu_scale", "proposer": "test", "round": 0}' >"$tmp/$1/silu_scale/lineage.json"
	if [ -n "${2:-}" ]; then
		python3 - "$tmp/$1/silu_scale/ref.c" "$2" <<'EOF'
import sys
p, new = sys.argv[1], sys.argv[2]
s = open(p).read()
assert "\ty[item] = r;" in s
open(p, "w").write(s.replace("\ty[item] = r;", new))
EOF
	fi
}
grade() { # folder out-name args...
	local d=$1 n=$2
	shift 2
	"$KA" grade --task "$d" --kernel "$K" --workdir "$tmp/w" --json "$tmp/$n.json" "$@" \
		>"$tmp/$n.out" 2>"$tmp/$n.err"
}
fields() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["verdict"], [c["check"] + "@" + c["shape"] for c in d.get("checks") or []])' "$1" 2>/dev/null; }

# ---- the same task, trusted and model-written ----------------------------------
task model
mkdir -p "$tmp/trusted" && cp -r "$T" "$tmp/trusted/"
grade "$tmp/trusted/silu_scale" trusted --min-samples 5 --max-samples 5
grade "$tmp/model/silu_scale" model --min-samples 5 --max-samples 5
expect same_grade "$(fields "$tmp/model.json")" "$(fields "$tmp/trusted.json")"
expect same_grade_ok "$(fields "$tmp/model.json" | cut -d' ' -f1)" ok
"$KA" bank validate "$tmp/trusted/silu_scale" 2>&1 | sed "s#$tmp/trusted/##" >"$tmp/v_trusted"
"$KA" bank validate "$tmp/model/silu_scale" 2>&1 | sed "s#$tmp/model/##" >"$tmp/v_model"
expect same_validate "$(cat "$tmp/v_model")" "$(cat "$tmp/v_trusted")"
for k in trusted model; do
	"$KA" gold --task "$tmp/$k/silu_scale" --shape "R=3,C=1031" -o "$tmp/gold_$k" >/dev/null 2>&1
done
expect same_gold_bytes "$(cd "$tmp/gold_model" && md5sum -- * | md5sum)" \
	"$(cd "$tmp/gold_trusted" && md5sum -- * | md5sum)"

# ---- broken at one item of the benchmark shape only ------------------------------
broken() { # name edit want max_seconds
	task "$1" "$2"
	local t0 t1 rc
	t0=$(date +%s)
	grade "$tmp/$1/silu_scale" "$1" --no-timing --bench-shape R=1,C=70001
	rc=$?
	t1=$(date +%s)
	local line
	line=$(cat "$tmp/$1.err")
	expect "$1" "$rc:$(wc -l <"$tmp/$1.err"):$(grep -c "^ka grade: task silu_scale is broken: the gold of task silu_scale .*$3.*at shape R=1,C=70001" "$tmp/$1.err"):$([ -s "$tmp/$1.json" ] && echo result || echo none)" "2:1:1:none"
	[ "$rc" = 2 ] || echo "  $line" | head -c 600
	expect "$1_seconds" "$([ $((t1 - t0)) -le "$4" ] && echo "within $4 s" || echo "$((t1 - t0)) s")" "within $4 s"
}
broken loops $'\tfor (ka_i64 k = 0; k < (item == 70000 ? 4000000000000 : 0); k++)\n\t\tr = r + 1e-300;\n\ty[item] = r;' \
	"ran over its deadline of" 60
broken writes_past $'\ty[item + (item == 70000 ? 100000000 : 0)] = r;' "killed by signal 11" 60
broken nan $'\tif (item == 70000)\n\t\tr = (v - v) / (v - v);\n\ty[item] = r;' "is not finite" 60

# ---- a box killed from outside ------------------------------------------------
# The box SIGKILLed once, as the OOM killer would, while it computes the
# benchmark shape's gold (slowed there for a second): that is no evidence
# about the task (the box's own CPU limit ends it with SIGXCPU), so the
# candidate is graded once more, and that grade stands: ok, with "regraded"
# naming the first grade's task failure. Before, the task was broken.
task slow $'\tfor (ka_i64 k = 0; k < (item == 70000 ? 500000000 : 0); k++)\n\t\tr = r + 1e-300;\n\ty[item] = r;'
"$KA" grade --task "$tmp/slow/silu_scale" --kernel "$K" --workdir "$tmp/w" --json "$tmp/slow.json" \
	--no-timing --bench-shape R=1,C=70001 >"$tmp/slow.out" 2>"$tmp/slow.err" &
pid=$!
killed=$(kill_helper "$pid" ka-goldbox 300 120)
wait "$pid"
expect box_sigkill_regraded "$? ${killed:+killed} $(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
g = r["regraded"] or ""
print(r["verdict"], "task failure" in g and "killed by signal 9" in g)' "$tmp/slow.json" 2>/dev/null)" "0 killed ok True"
