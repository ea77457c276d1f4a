#!/usr/bin/env bash
# tools/bench_compile.sh [OUTDIR]: the compile-latency figures of
# docs/PERF.md ("Compile latency"), the split path (default) beside one nvcc
# run (KA_CUDA_COMPILER=nvcc) in one run, and the split path with and without
# its fork servers for cicc and cudafe++ (docs/compile.md, section 7):
# "split" is KA_CUDA_FORKSRV=off, "split+fork" the servers. For an L1, an L2
# and an L3 bank solution, each path:
#   cold   the first compile in a fresh cache folder, in a fresh process
#          (for the split path this includes nvcc --dryrun and building the
#          precompiled prefix, once per cache folder);
#   warm   a fresh source (the solution with a new comment line, so nothing
#          is cached but the folder's invariant parts) in a fresh process:
#          the median of BENCH_REPS (default 3) runs, as compile seconds, as
#          the grade from source to verdict, and as the CPU seconds (user +
#          system) of the grade's whole process tree (what a loaded machine
#          has to find: the wall times depend on free cores);
#   loop   a self-refine loop: 5 fresh variants checked one after another
#          by one ka process (`ka grade --jobs 0 --graders 1`: no
#          compile-ahead, one grade at a time, as a refine loop waits for
#          each verdict), the wall time of all 5 from source to verdict.
# The servers live as long as a ka process and start at its second compile
# (KA_CUDA_FORKSRV=auto, the default), so a fresh process compiling once
# never has them: for split+fork, cold and loop run as ka does by default,
# and warm is measured inside one process whose servers are up
# (KA_CUDA_FORKSRV=on: they start at the first compile): 2 variants
# graded first, then BENCH_REPS more, whose median compile and grade times
# are the warm figures; its CPU figure is the marginal one, the CPU seconds
# of that process less those of a process grading only the 2 first
# variants, per variant.
# With an NVIDIA GPU and the CUDA runner, grades are full grades (timing
# capped by BENCH_MAX_SECONDS, default 1); elsewhere they stop at the record
# stage (--record-only with the H200's properties: compile and the
# sandboxed host code, no device). Prints a markdown table and writes
# OUTDIR/compile.md and the grade JSONs. `make bench` runs it.
set -u
OUT=${1:-out/bench/compile}
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
REPS=${BENCH_REPS:-3}
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
	echo "bench_compile: needs nvcc: nothing measured"
	exit 0
fi
if [ ! -x "$BUILD/ka-cudaphases" ]; then
	echo "bench_compile: needs $BUILD/ka-cudaphases (make builds it): nothing measured"
	exit 0
fi
TASKS=${BENCH_TASKS:-L1/row_sum L2/gemm_bias_gelu_bf16 L3/sdpa_bf16_d128}
# BENCH_PATHS: which compile paths, of "nvcc split split+fork" (the default).
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if { [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; } && [ -x "$BUILD/ka-run-cuda" ]; then
	MODE=full
	STAGE=(--max-seconds "${BENCH_MAX_SECONDS:-1}")
else
	MODE=record
	STAGE=(--record-only tests/data/cuda/h200_device.json)
fi

# variant TASK N: the solution with comment line N on top, in $OUT/src
variant() {
	local f="$OUT/src/$(basename "$1")-$2-$RANDOM$RANDOM.cu"
	mkdir -p "$OUT/src"
	{ echo "// bench variant $2 $RANDOM$RANDOM"; cat "bank/public/$1/solutions/cuda.cu"; } >"$f"
	echo "$f"
}
# field JSON KEY: seconds.KEY of a grade JSON (total: source to verdict)
field() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.2f" % d["seconds"][sys.argv[2]])' "$1" "$2" 2>/dev/null || echo "?"
}
verdict() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null || echo "?"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR ? a[int((NR + 1) / 2)] : "?")}'; }
# grade PATH TASK KERNEL WORKDIR JSON: one grade in a fresh process; the
# CPU seconds (user + system) of its whole process tree in JSON.cpu. PATH
# is nvcc, split or split+fork; FORKSRV (default off) is KA_CUDA_FORKSRV.
grade() {
	KA_CUDA_COMPILER=${1%%+*} KA_CUDA_FORKSRV=${FORKSRV:-off} /usr/bin/time -o "$5.cpu" \
		-f "%U %S" "$KA" grade --target cuda --task "bank/public/$2" --kernel "$3" \
		--workdir "$4" --json "$5" "${STAGE[@]}" >"$5.log" 2>&1
}
cpu() { awk '{printf "%.2f", $1 + $2}' "$1.cpu" 2>/dev/null || echo "?"; }
# grades PATH TASK WORKDIR JSONL N: N fresh variants graded one after
# another by one process (FORKSRV as for grade); CPU seconds in JSONL.cpu
grades() {
	local args=() i
	for i in $(seq 1 "$5"); do args+=(--kernel "$(variant "$2" "in$i")"); done
	rm -f "$4"
	KA_CUDA_COMPILER=${1%%+*} KA_CUDA_FORKSRV=${FORKSRV:-off} /usr/bin/time -o "$4.cpu" \
		-f "%U %S" "$KA" grade --target cuda --task "bank/public/$2" "${args[@]}" --jobs 0 --graders 1 \
		--workdir "$3" --json "$4" "${STAGE[@]}" >"$4.log" 2>&1
}
# tail_median JSONL KEY SKIP: the median of seconds.KEY over the grades
# of JSONL after the first SKIP
tail_median() {
	python3 -c 'import json,sys
v = sorted(json.loads(l)["seconds"][sys.argv[2]] for l in list(open(sys.argv[1]))[int(sys.argv[3]):])
print("%.2f" % v[(len(v) - 1) // 2] if v else "?")' "$1" "$2" "$3" 2>/dev/null || echo "?"
}
# warm_in_process TASK WORKDIR NAME: the split+fork warm figures (see the
# top): "compile grade cpu"
warm_in_process() {
	FORKSRV=on grades split+fork "$1" "$2" "$OUT/$3-warm.jsonl" $((2 + REPS))
	FORKSRV=on grades split+fork "$1" "$2" "$OUT/$3-warm2.jsonl" 2
	echo "$(tail_median "$OUT/$3-warm.jsonl" compile 2) $(tail_median "$OUT/$3-warm.jsonl" total 2)" \
		"$(awk -v n="$REPS" 'NR == FNR { a = $1 + $2; next } { printf "%.2f", (a - $1 - $2) / n }' \
			"$OUT/$3-warm.jsonl.cpu" "$OUT/$3-warm2.jsonl.cpu" 2>/dev/null || echo "?")"
}

# settle: wait (at most BENCH_SETTLE_S, default 60 s) until the machine is
# quiet: at most 3 runnable tasks (/proc/loadavg's fourth field, counting
# this shell and its two `cut`s) three seconds running. On the H200 on 2026-12-04 a run started
# right after throughput runs measured everything ~40% slower, nvcc too.
settle() {
	local quiet=0 waited=0 r
	while [ "$quiet" -lt 3 ] && [ "$waited" -lt "${BENCH_SETTLE_S:-60}" ]; do
		r=$(cut -d' ' -f4 /proc/loadavg | cut -d/ -f1)
		if [ "$r" -le 3 ]; then quiet=$((quiet + 1)); else quiet=0; fi
		sleep 1
		waited=$((waited + 1))
	done
	echo "$waited"
}
SETTLED=$(settle)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

rows=()
for t in $TASKS; do
	for path in ${BENCH_PATHS:-nvcc split split+fork}; do
		name=$(basename "$t")-$path
		W="$OUT/work-$name"
		rm -rf "$W"
		# the defaults of a fresh process: servers only from a second compile
		fs=off
		[ "$path" = split+fork ] && fs=auto
		FORKSRV=$fs grade $path "$t" "$(variant "$t" cold)" "$W" "$OUT/$name-cold.json"
		cold_c=$(field "$OUT/$name-cold.json" compile)
		v=$(verdict "$OUT/$name-cold.json")
		if [ "$path" = split+fork ]; then
			read -r warm_c warm_t warm_cpu < <(warm_in_process "$t" "$W" "$name")
		else
			wc_list=() wt_list=() cpu_list=()
			for r in $(seq 1 "$REPS"); do
				grade $path "$t" "$(variant "$t" "warm$r")" "$W" "$OUT/$name-warm$r.json"
				wc_list+=("$(field "$OUT/$name-warm$r.json" compile)")
				wt_list+=("$(field "$OUT/$name-warm$r.json" total)")
				cpu_list+=("$(cpu "$OUT/$name-warm$r.json")")
			done
			warm_c=$(printf '%s\n' "${wc_list[@]}" | median)
			warm_t=$(printf '%s\n' "${wt_list[@]}" | median)
			warm_cpu=$(printf '%s\n' "${cpu_list[@]}" | median)
		fi
		args=()
		for i in 1 2 3 4 5; do args+=(--kernel "$(variant "$t" "loop$i")"); done
		t0=$(date +%s.%N)
		KA_CUDA_COMPILER=${path%%+*} KA_CUDA_FORKSRV=$fs "$KA" grade --target cuda \
			--task "bank/public/$t" "${args[@]}" --jobs 0 --graders 1 --workdir "$W" \
			--json "$OUT/$name-loop.jsonl" "${STAGE[@]}" >"$OUT/$name-loop.log" 2>&1
		loop=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
		rows+=("| $t | $path | $v | $cold_c | $warm_c | $warm_t | $warm_cpu | $(printf '%.2f' "$loop") |")
		echo "${rows[-1]}"
	done
done

{
	echo "Compile latency, $(date -u +%Y-%m-%d), $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)),"
	echo "load average $LOAD0 at the start (after waiting ${SETTLED} s for a quiet machine), $(cut -d' ' -f1-3 /proc/loadavg) at the end, grades: $MODE, warm figures the median of $REPS."
	echo "Command: tools/bench_compile.sh (make bench)."
	echo
	echo "split: without the fork servers (KA_CUDA_FORKSRV=off); split+fork: warm inside one process whose servers are up, CPU per variant."
	echo
	echo "| task | path | verdict | cold compile s | warm compile s | warm grade s (source to verdict) | warm grade CPU s | loop of 5 checks s |"
	echo "|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
} | tee "$OUT/compile.md"
