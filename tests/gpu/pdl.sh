#!/usr/bin/env bash
# GPU tier: programmatic dependent launch (PDL) between a candidate's own
# kernels (docs/cuda-target.md, section 7). tests/data/pdl/chain.cu is
# L1/gelu_bias_scale in two kernels, both launched with
# cudaLaunchAttributeProgrammaticStreamSerialization; the second waits with
# cudaGridDependencySynchronize and then does about 60% of the work, the
# first about 40%. Three variants, made here by flipping its two switches:
#   on:     as written: must grade ok with a time;
#   off:    the same launches without the attribute, graded in the same
#           session: the time with PDL must be at least 0.8 x this one. This
#           is the proof that the timed window still covers all the work: a
#           replay that let either kernel run outside the events would lose
#           at least 40% of the time;
#   nowait: the second kernel reads the first one's output without waiting
#           (a race): wrong_answer, nonfinite or unwritten_output, or ok by
#           luck, and never a harness failure, a fault or implausible_time.
# SKIP where there is no GPU or no CUDA runner. A few seconds of device time
# besides compiling (the benchmark shape is cut to R=1024, C=4096).
set -u
. tests/gpu/lib/need_gpu.sh pdl
tmp=${KA_GPU_OUT:-$(mktemp -d)}
mkdir -p "$tmp"
task=bank/public/L1/gelu_bias_scale
src=tests/data/pdl/chain.cu
# field FILE LINE EXPR: EXPR of the result on line LINE of a JSONL file (several
# candidates), or of the whole file when it holds one result (one candidate:
# ka grade --json writes it indented).
field() { python3 -c '
import json, sys
text = open(sys.argv[1]).read()
try:
    r = json.loads(text)
except ValueError:
    r = json.loads(text.splitlines()[int(sys.argv[2])])
print(eval(sys.argv[3]))' "$@" 2>/dev/null; }

cp "$src" "$tmp/pdl_on.cu"
sed 's/^#define PDL 1$/#define PDL 0/' "$src" >"$tmp/pdl_off.cu"
sed 's/^#define WAIT 1$/#define WAIT 0/' "$src" >"$tmp/pdl_nowait.cu"
if cmp -s "$src" "$tmp/pdl_off.cu" || cmp -s "$src" "$tmp/pdl_nowait.cu"; then
	echo "FAIL pdl/variants: $src no longer has the lines '#define PDL 1' and '#define WAIT 1'"
	exit 0
fi

"$KA" grade --target cuda --task "$task" --kernel "$tmp/pdl_on.cu" --kernel "$tmp/pdl_off.cu" \
	--graders 1 --bench-shape "R=1024,C=4096" --max-seconds 3 --workdir "$tmp/work" \
	--json "$tmp/timed.jsonl" >"$tmp/timed.log" 2>&1
rc=$?
summary='"%s %s %s" % (r["verdict"], r["time_us"] and round(r["time_us"]["median"],2), r["cupti_span_us"] and round(r["cupti_span_us"]["median"],2))'
on=$(field "$tmp/timed.jsonl" 0 "$summary")
off=$(field "$tmp/timed.jsonl" 1 "$summary")
set -- $on
on_v=${1:-none} on_t=${2:-None} on_span=${3:-None}
set -- $off
off_v=${1:-none} off_t=${2:-None}
if [ "$rc" -eq 0 ] && [ "$on_v" = ok ] && [ "$on_t" != None ]; then
	echo "PASS pdl/on (ok, time $on_t us, CUPTI span $on_span us)"
else
	echo "FAIL pdl/on: '$on' (exit $rc): $(field "$tmp/timed.jsonl" 0 'r["detail"]' | head -c 600) $(tail -c 400 "$tmp/timed.log" | tr '\n' ' ')"
fi
if [ "$rc" -eq 0 ] && [ "$off_v" = ok ] && [ "$off_t" != None ]; then
	echo "PASS pdl/off (ok, time $off_t us)"
else
	echo "FAIL pdl/off: '$off' (exit $rc): $(field "$tmp/timed.jsonl" 1 'r["detail"]' | head -c 600)"
fi
if [ "$on_t" != None ] && [ "$off_t" != None ]; then
	ratio=$(python3 -c "import sys; print('%.3f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$on_t" "$off_t")
	if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.8 else 1)" "$ratio"; then
		echo "PASS pdl/window_covers_work (with PDL $on_t us, without $off_t us: ratio $ratio >= 0.8)"
	else
		echo "FAIL pdl/window_covers_work: with PDL $on_t us, without $off_t us: ratio $ratio < 0.8 (work ran outside the timed window?)"
	fi
else
	echo "FAIL pdl/window_covers_work: no times to compare (on '$on', off '$off')"
fi

"$KA" grade --target cuda --task "$task" --kernel "$tmp/pdl_nowait.cu" --no-timing \
	--workdir "$tmp/work" --json "$tmp/nowait.json" >"$tmp/nowait.log" 2>&1
rc=$?
verdict=$(field "$tmp/nowait.json" 0 'r["verdict"]')
shape=$(field "$tmp/nowait.json" 0 'r["shape"]')
case "$rc ${verdict:-none}" in
"0 ok") echo "PASS pdl/nowait (ok: the race did not show on these calls)" ;;
"0 wrong_answer" | "0 nonfinite" | "0 unwritten_output")
	echo "PASS pdl/nowait ($verdict at $shape: the dependent kernel started before its primary ended, so the attribute was replayed)" ;;
*) echo "FAIL pdl/nowait: exit $rc, verdict '${verdict:-none}': $(field "$tmp/nowait.json" 0 'r["detail"]' | head -c 600) $(tail -c 400 "$tmp/nowait.log" | tr '\n' ' ')" ;;
esac
