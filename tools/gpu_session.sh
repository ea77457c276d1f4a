#!/usr/bin/env bash
# tools/gpu_session.sh "PARTS": one call of the device tool (DEVELOPERS.md):
# the GPU tier, per-call runner profiles of the starter solutions, and the
# parts of tools/bench_gpu.sh, writing under $OUT (the device tool's output
# folder). Build here and carry the build:
#   rm -rf build-gpu && mkdir build-gpu && cp build/ka build/ka-record-* \
#     build/ka-run-* build/ka-clc build/ka-cudaphases build/ka-forkshim.so build/ka-goldbox build-gpu/ &&
#     bash tools/bundle-libs.sh build-gpu
# then run `bash tools/gpu_session.sh "tier prof lat thr rep cap probe"` with
# carry ["build-gpu"]. PARTS: tier, prof, lat, probe, rep, thr, cap, tierlast, edges,
# and the open measurements of the issues (docs/PERF.md says which are
# missing): stale (bank_gpu on the tasks whose baselines changed since they
# were measured), calib (calibrate.py on tasks missing from the calibration
# file), recalib (calibrate.py on the tasks of CALIB_ONLY), thrjobs (throughput with no compile-ahead and with one nvcc run, to
# find why the second graders run was slower), comp (tools/bench_compile.sh),
# rsi (tools/rsi_gpu_bench.py), attn (tools/attn_calib_probe.py), attncal (the
# attention tasks: calibrate.py in their baseline_torch form, then bank_gpu.sh),
# thrq (the 32-candidate throughput runs only), thrbound (fresh against cached compiles, 2 to 6 graders), thrwidth (the compile-ahead's width, L1 and L3), cuptidiag (tools/diag/cupti_*.cu), bankgrade (ka bank validate --grade, whole bank), diag (tools/diag/hang_hunt.sh:
# the L1 track on CUDA three times with a watchdog that dumps compile
# processes older than 20 s). Results are archived as $OUT/session.tgz (the
# device tool returns a limited number of files).
set -u
OUT=${OUT:-out/gpu-session}
mkdir -p "$OUT"
export KA_HOME=$PWD LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 BUILD=build-gpu KA=$PWD/build-gpu/ka
export KA_GPU_OUT=$OUT/gpu
PARTS=${1:-"tier prof lat probe"}
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
T0=$(date +%s)
stamp() { echo "## t=$(( $(date +%s) - T0 ))s $*"; }
# SESSION_S: the seconds this call may take (the device tool's limit less a
# margin for the archive); each long part runs under `timeout $(left)`, so a
# slow part never costs the results of the parts before it.
left() { local l=$(( ${SESSION_S:-560} - ($(date +%s) - T0) )); [ $l -gt 5 ] && echo $l || echo 5; }
archive() {
	stamp end
	rm -rf "$OUT/gpu/work" "$OUT/bench/work" "$OUT/w" "$OUT/bench/lat" "$OUT/bench/thr" "$OUT"/gpu/*.log \
		"$OUT"/cap/kernels "$OUT/stale/work" "$OUT/comp"/*/ 2>/dev/null
	# The device tool returns at most 8 files of 16 MiB: one archive of the
	# small files (results, logs), the large ones (work folders) left out.
	# Results and logs only: a run folder's cache holds hundreds of compiled
	# objects under 2 MB each (26 MB in all once, over the tool's limit).
	# A run's journal (every grade's evidence) up to 15 MB.
	(cd "$OUT" && find . -type f \( -size -2M -o \( -name "*.sqlite" -size -15M \) \) ! -name session.tgz ! -path "*/.grade/*" ! -path "*/cache/*" \
		\( -name "*.json" -o -name "*.jsonl" -o -name "*.txt" -o -name "*.log" -o -name "*.err" \
		-o -name "*.md" -o -name "*.csv" -o -name "*.sqlite" \) | tar czf ../session.tgz -T - &&
		mv ../session.tgz . && find . -mindepth 1 ! -name session.tgz -delete
		ls -l session.tgz)
}
trap archive EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
if want tier; then stamp tier; timeout $(left) bash tests/run.sh gpu 2>&1 | tee "$OUT/tier.log" | tail -45
	python3 - "$OUT/gpu" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try:
        r = json.load(open(f))
    except Exception:
        continue
    if r.get("verdict") == "implausible_time":
        print("IMPLAUSIBLE", f, r.get("shape"), r.get("detail"), json.dumps(r.get("evidence")))
PY
fi
# comp right after the tier, before any throughput run (a loaded machine
# measured every compile ~40% slower on 2026-12-04)
if want comp; then stamp comp; BENCH_TASKS=${BENCH_TASKS:-"L1/row_sum L2/gemm_bias_gelu_bf16"} timeout $(left) bash tools/bench_compile.sh "$OUT/comp" 2>&1 | tail -8; fi
prof() { # task tag
	local tag=$(basename $1)-$2
	KA_RUNNER_PROFILE=1 KA_RUNNER_LOG=1 "$KA" grade --target cuda --task bank/public/$1 \
		--kernel bank/public/$1/solutions/cuda.cu --max-seconds 20 --workdir "$OUT/w" \
		--json "$OUT/prof-$tag.json" 2>"$OUT/prof-$tag.err" | grep -E "verdict|time|eager|compiled|seconds"
	python3 - "$OUT/prof-$tag.err" <<'PY'
import re, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    m = re.match(r"ka-run-cuda: slot (\d+): prepare ([\d.]+) ms, waited for go ([\d.]+) ms, flush ([\d.]+) ms, replay ([\d.]+) ms, cupti ([\d.]+) ms, read back ([\d.]+) ms, event ([\d.]+) us, span ([\d.]+) us", l)
    if m:
        # prepare as before: the preparation and the flush (the wait for go apart)
        v = [float(x) for x in m.groups()[1:]]
        rows.setdefault(int(m[1]), []).append([v[0] + v[2]] + v[3:])
for s, v in sorted(rows.items()):
    c = list(zip(*v))
    ev = [x for x in c[4] if x > 0]
    extra = ""
    if ev:
        d = [a - b for a, b in zip(c[4], c[5]) if a > 0]
        extra = f" | event {st.median(ev):.2f} span {st.median(c[5]):.2f} event-span {st.median(d):.2f} us"
    print(f"slot {s}: n={len(v)} prep {st.median(c[0]):.3f} replay {st.median(c[1]):.3f} cupti {st.median(c[2]):.3f} readback {st.median(c[3]):.3f} ms{extra}")
PY
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("time", r["time_us"], "span", r["cupti_span_us"], "over", r.get("window_overhead_us"), "seconds", r["seconds"]); print({k: r["device"].get(k) for k in ("timing_window","window_empty_us","window_kernel_us","window_overhead_us")})' "$OUT/prof-$tag.json"
}
if want prof; then
	for t in L1/gelu_bias_scale L2/gemm_bias_gelu L3/softmax_rows; do stamp prof $t; prof $t graph; done
fi
if want lat; then stamp lat; BENCH_PARTS="lat" bash tools/bench_gpu.sh "$OUT/bench" 2>&1 | tail -20; fi
if want probe; then stamp probe; BENCH_PARTS="probe" bash tools/bench_gpu.sh "$OUT/bench" 2>&1 | tail -5; fi
if want rep; then stamp rep; BENCH_PARTS="rep" bash tools/bench_gpu.sh "$OUT/bench" 2>&1 | tail -40; fi
# thr: every throughput run of bench_gpu.sh (THR_BESIDE_JOBS=16 adds the
# previous default's compile-ahead width beside each run of several graders).
if want thr; then stamp thr; (vmstat -n 1 >"$OUT/vmstat-thr.txt" 2>&1 &) ; BENCH_PARTS="thr" timeout $(left) bash tools/bench_gpu.sh "$OUT/bench" 2>&1 |
	grep -E "^--|^graded|waiting|parallelism"
	pkill -x vmstat; fi
if want thrq; then stamp thrq; (vmstat -n 1 >"$OUT/vmstat-thrq.txt" 2>&1 &) ; THR_QUICK=${THR_QUICK:-1} BENCH_PARTS="thr" timeout $(left) bash tools/bench_gpu.sh "$OUT/bench" 2>&1 |
	grep -E "^--|^graded|per cand|compile|record|correctness|timing|waiting|gold|parallelism"
	pkill -x vmstat; fi
if want cap; then stamp cap; CAP_TIMEOUT=$(( $(left) - 25 )) BENCH_PARTS="cap" bash tools/bench_gpu.sh "$OUT/bench" 2>&1 | tail -10
	tail -4 "$OUT/bench/cap.log"; fi
STALE=${STALE_TASKS:-"L3/swa_causal_f16_d64 L2/gemm_splitk_bf16 L1/row_max L1/cumsum_rows L1/scatter_add
	L1/permute_3d L3/log_softmax L2/gemm_splitk L2/bmm_f16"}
if want stale; then stamp stale
	dirs=()
	for t in $STALE; do dirs+=("bank/public/$t"); done
	BANK_GPU_MAX_SECONDS=1 timeout $(left) bash tools/bank_gpu.sh "$OUT/stale" "${dirs[@]}" 2>&1 | grep -E "bank_gpu:|of" | cut -c1-160
fi
if want calib; then stamp calib
	missing=$(python3 - <<'PY'
import glob, json, os
have = set()
for f in glob.glob("bank/calibration/*.json"):
    if not f.endswith(".kernels.jsonl"):
        try:
            have |= set(json.load(open(f)).get("tasks", {}))
        except Exception:
            pass
names = [os.path.basename(os.path.dirname(p)) for p in glob.glob("bank/public/*/*/task.json")]
print(",".join(sorted(n for n in names if n not in have)))
PY
)
	[ -n "$missing" ] && timeout $(left) python3 tools/calibrate.py --samples 50 --only "$missing" 2>&1 | tail -12
	cp bank/calibration/*.json "$OUT/" 2>/dev/null
fi
# recalib: calibrate.py again on the tasks named in CALIB_ONLY (comma-separated), whose
# PyTorch times are in doubt (a wide interval, a run of another day); the updated file is copied to $OUT.
if want recalib; then stamp recalib
	[ -n "${CALIB_ONLY:-}" ] && timeout $(left) python3 tools/calibrate.py --samples 50 --only "$CALIB_ONLY" 2>&1 | tail -12
	cp bank/calibration/*.json "$OUT/" 2>/dev/null
fi
if want thrjobs; then stamp thrjobs
	for variant in "--jobs 0" "nvcc"; do
		dir="$OUT/thrjobs/$(echo $variant | tr -d ' -')"
		mkdir -p "$dir"
		args=()
		for i in $(seq 1 32); do
			sed "1i // $variant $i $RANDOM$RANDOM" bank/public/L1/gelu_bias_scale/solutions/cuda.cu >"$dir/c$i.cu"
			args+=(--kernel "$dir/c$i.cu")
		done
		extra=(); env=()
		if [ "$variant" = nvcc ]; then env=(KA_CUDA_COMPILER=nvcc); else extra=(--jobs 0); fi
		echo "-- thrjobs: $variant"
		env "${env[@]}" "$KA" grade --target cuda --task bank/public/L1/gelu_bias_scale "${args[@]}" \
			"${extra[@]}" --graders 4 --profile --workdir "$OUT/w" | sed -n '/^graded/,$p'
		rm -rf "$dir"
	done
fi
if want rsi; then stamp rsi; python3 tools/rsi_gpu_bench.py --help >/dev/null 2>&1 && timeout $(left) python3 tools/rsi_gpu_bench.py ${RSI_ARGS:-} --out "$OUT/rsi.json" 2>&1 | tail -12; fi
if want front; then stamp front; timeout $(left) bash tools/frontier_gpu.sh "$OUT/front" 2>&1 | tail -25; fi
# tierfast: the GPU tier without cuda_split.sh (146 s; it checks only the
# compile path, unchanged when nothing under src/cuda* changed).
if want tierfast; then stamp tierfast
	only=$(cd tests/gpu && ls *.sh | grep -v '^cuda_split\.sh$' | sed 's/\.sh$//' | paste -sd'|')
	KA_TEST_ONLY="^($only)\.sh\$" timeout $(left) bash tests/run.sh gpu 2>&1 | tail -45
fi
# attn: the attention tasks' PyTorch times in three forms (tools/attn_calib_probe.py; ATTN_ONLY: task names).
if want attn; then stamp attn; timeout $(left) python3 tools/attn_calib_probe.py --samples 50 ${ATTN_ONLY:+--only "$ATTN_ONLY"} \
	--out "$OUT/attn.json" 2>&1 | grep -v Warning | tail -30; fi
# attncal: the attention tasks (those with a baseline_torch): tools/calibrate.py
# in that form (their statement, F.scaled_dot_product_attention, timed too,
# and the kernels each form launches in $OUT/attn_kernels.jsonl), then
# tools/bank_gpu.sh on them (baselines and solution checked against gold,
# eager.cu / torch eager and compiled.cu / torch.compile in
# $OUT/attncal/bank_gpu.md). The calibration file comes back in $OUT.
# ATTN_ONLY (comma-separated names) narrows it to some of them.
if want attncal; then stamp attncal
	attn=${ATTN_ONLY:-}
	[ -n "$attn" ] || attn=$(python3 -c 'import glob, json, os
print(",".join(sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob("bank/public/*/*/task.json")
                      if "baseline_torch" in json.load(open(p)))))')
	timeout $(( $(left) / 2 )) python3 tools/calibrate.py --samples 50 --only "$attn" \
		--kernels "$OUT/attn_kernels.jsonl" 2>&1 | grep -v Warning | tail -12
	cp bank/calibration/*.json "$OUT/" 2>/dev/null
	dirs=()
	for n in ${attn//,/ }; do dirs+=(bank/public/*/"$n"); done
	BANK_GPU_MAX_SECONDS=1 timeout $(left) bash tools/bank_gpu.sh "$OUT/attncal" "${dirs[@]}" 2>&1 |
		grep -E "bank_gpu:|of" | cut -c1-200
	cat "$OUT/attncal/bank_gpu.md" 2>/dev/null
fi
# tiersel: the GPU tier's tests whose names match TIER_ONLY (a regex, e.g. '^(pdl|grade_cuda)\.sh$').
if want tiersel; then stamp tiersel; KA_TEST_ONLY="${TIER_ONLY:-.}" timeout $(left) bash tests/run.sh gpu 2>&1 | tail -45; fi
if want tierlast; then stamp tierlast; timeout $(left) bash tests/run.sh gpu 2>&1 | tail -8; fi
# edges: the task-format edge cases on CUDA: tests/data/tasks_edge/near_int_max (int32
# results in the poison's window, 16 Mi a call: ok; unwritten_output before 44f56c7)
# and, where EDGE_BANK names a bank of probe tasks with solutions/cuda.cu, each in full.
if want edges; then stamp edges
	timeout $(left) "$KA" grade --target cuda --task tests/data/tasks_edge/near_int_max \
		--kernel tests/data/grade_edges/near_int_max.cu --max-seconds 5 --json "$OUT/edges-near_int_max.json" \
		--workdir "$OUT/w" 2>&1 | grep -E '^(verdict|detail|time|seconds)'
	for t in ${EDGE_BANK:+"$EDGE_BANK"/*/*/}; do
		[ -f "$t/solutions/cuda.cu" ] || continue
		echo "== $t"
		timeout $(left) "$KA" grade --target cuda --task "$t" --kernel "$t/solutions/cuda.cu" --max-seconds 5 \
			--json "$OUT/edges-$(basename "$t").json" --workdir "$OUT/w" 2>&1 |
			grep -E '^(verdict|detail|time|eager|compiled|seconds)|grader failure'
	done
fi
# bankgrade: `ka bank validate --grade` (issues 13 to 15: the calibration
# table; $OUT/bankgrade.txt and .jsonl) of BANKGRADE_TASKS (tier folders or task
# names; default the whole bank, ~14 s a task: more than one call's 10
# minutes, so bank/public/L1 in one call and "bank/public/L2 bank/public/L3"
# in the next).
if want bankgrade; then stamp bankgrade
	# shellcheck disable=SC2086
	timeout "$(left)" "$KA" bank validate --grade --max-seconds 1 --workdir "$OUT/w" \
		--json "$OUT/bankgrade.jsonl" ${BANKGRADE_TASKS:-} >"$OUT/bankgrade.txt" 2>&1
	echo "exit $?"; grep -E "^\||^out of|solutions ok" "$OUT/bankgrade.txt" | tail -70
fi
# cuptidiag: the CUPTI diagnostics (tools/diag/cupti_*.cu; docs/PERF.md, "CUPTI").
if want cuptidiag; then stamp cuptidiag
	for d in names nodes; do nvcc -O2 -std=c++17 -o "$OUT/cupti_$d" tools/diag/cupti_$d.cu -lcuda -lcupti; done
	timeout 60 "$OUT/cupti_names" unload 400 2>&1 | tail -2
	timeout 60 "$OUT/cupti_nodes" 300 2>&1 | tail -2
	rm -f "$OUT"/cupti_names "$OUT"/cupti_nodes
fi
# thrbound (issue 21): what bounds the 4-grader L1 rate. 32 fresh L1
# candidates graded with 4 graders (compiled ahead), then the same 32 again
# from the compile cache (no compile: the rate the grading alone allows),
# then the cached ones with 2 and 6 graders; vmstat beside. A warm-up of 4
# others first (the baselines' setup), as every run after the first.
# --jobs one per core, as measured on 2026-12-06 (the default then).
if want thrbound; then stamp thrbound
	d="$OUT/tb"; mkdir -p "$d"; args=(); warm=()
	for i in $(seq 1 36); do
		sed "1i // thrbound $i $RANDOM$RANDOM" bank/public/L1/gelu_bias_scale/solutions/cuda.cu >"$d/c$i.cu"
		if [ $i -le 4 ]; then warm+=(--kernel "$d/c$i.cu"); else args+=(--kernel "$d/c$i.cu"); fi
	done
	(vmstat -n 1 >"$OUT/vmstat-tb.txt" 2>&1 &)
	tb() { # tag graders kernels...
		local tag=$1 g=$2; shift 2; stamp "thrbound $tag"
		timeout $(left) "$KA" grade --target cuda --task bank/public/L1/gelu_bias_scale "$@" --jobs "$(nproc)" \
			--graders "$g" --profile --workdir "$OUT/tbw" --json "$OUT/tb-$tag.jsonl" 2>"$OUT/tb-$tag.err" |
			sed -n '/^graded/,$p' | tee "$OUT/tb-$tag.txt" | grep -E "^graded|waiting|compile|correctness|timing|parallel"
	}
	tb warm 4 "${warm[@]}" >/dev/null
	tb fresh-g4 4 "${args[@]}"
	tb cached-g4 4 "${args[@]}"
	tb cached-g2 2 "${args[@]}"
	tb cached-g6 6 "${args[@]}"
	pkill -x vmstat
fi
# thrwidth (issue 21): the compile-ahead's width. 32 fresh candidates with 4
# graders, L1 gelu_bias_scale and L3 softmax_rows, each with --jobs 8 (half
# the cores: the default of commit 36c2548), the default (half the cores
# until each grader has its first candidate, then all) and --jobs 16 (one a
# core: the default before), THRW_ROUNDS rounds (default 2) in turn, after
# a warm-up of 4 per task (the baselines' setup); vmstat beside.
# THRW_VARIANTS (default "8 def 16"): a number is --jobs N, def the build's
# default, ka2 the default of another build's ka (THRW_KA2, a path).
if want thrwidth; then stamp thrwidth
	(vmstat -n 1 >"$OUT/vmstat-tw.txt" 2>&1 &)
	tw() { # task tag jobs-args...
		local task=$1 tag=$2 d="$OUT/tw/$2" args=(); shift 2
		mkdir -p "$d"
		for i in $(seq 1 32); do
			sed "1i // thrwidth $tag $i $RANDOM$RANDOM" bank/public/$task/solutions/cuda.cu >"$d/c$i.cu"
			args+=(--kernel "$d/c$i.cu")
		done
		[ "${tag#warm}" != "$tag" ] && args=("${args[@]:0:8}")
		stamp "thrwidth $tag $*"
		timeout $(left) "$KA" grade --target cuda --task bank/public/$task "${args[@]}" "$@" --graders 4 \
			--profile --workdir "$OUT/tww" --json "$OUT/tw-$tag.jsonl" 2>"$OUT/tw-$tag.err" |
			sed -n '/^graded/,$p' | tee "$OUT/tw-$tag.txt" | grep -E "^graded|parallel"
		rm -rf "$d"
	}
	for task in L1/gelu_bias_scale L3/softmax_rows; do
		k=$(dirname $task | tr 'L' 'l')
		tw $task warm-$k >/dev/null
		for r in $(seq 1 "${THRW_ROUNDS:-2}"); do
			for v in ${THRW_VARIANTS:-8 def 16}; do
				case $v in
				def) tw $task $k-def-$r ;;
				ka2) KA=$THRW_KA2 tw $task $k-ka2-$r ;;
				*) tw $task $k-j$v-$r --jobs $v ;;
				esac
			done
		done
	done
	pkill -x vmstat
fi
# wprof: where a warm L1 grade's time goes (issue 23): WPROF_N (default 7)
# fresh row_sum variants graded one after another by one process whose fork
# servers start at once, with --profile, the per-call trace (KA_GRADE_TRACE),
# the runner's per-call profile and the compile trace; once for each value
# of KA_GOLD_AHEAD in WPROF_AHEAD (default "auto"; "0 1" compares); the grade
# JSONs in $OUT/wprof-VALUE.
if want wprof; then
	for a in ${WPROF_AHEAD:-auto}; do stamp "wprof KA_GOLD_AHEAD=$a"
		d="$OUT/wprof-$a"; mkdir -p "$d"; args=()
		for i in $(seq 1 "${WPROF_N:-7}"); do
			sed "1i // wprof $i $RANDOM$RANDOM" bank/public/L1/row_sum/solutions/cuda.cu >"$d/v$i.cu"
			args+=(--kernel "$d/v$i.cu")
		done
		KA_GOLD_AHEAD=$a KA_CUDA_FORKSRV=on KA_CUDAC_TRACE=1 KA_GRADE_TRACE=1 KA_RUNNER_PROFILE=1 KA_RUNNER_LOG=1 \
			timeout $(left) "$KA" grade --target cuda --task bank/public/L1/row_sum "${args[@]}" --jobs 0 \
			--graders 1 --max-seconds 1 --profile --workdir "$OUT/w" --json "$d/grades.jsonl" >"$d/out.txt" 2>"$d/err.txt"
		sed -n '/^profile/,$p' "$d/out.txt" | grep -E "compile|record|correct|timing|total|ahead"
		python3 -c 'import json,sys
for l in open(sys.argv[1]): r = json.loads(l); print(r["verdict"], " ".join("%s %.3f" % (k, v) for k, v in r["seconds"].items() if k in ("compile", "record", "correctness", "timing", "total", "ahead", "verify")))' "$d/grades.jsonl"
	done
fi
if want diag; then stamp diag; timeout $(left) bash tools/diag/hang_hunt.sh "$OUT/hang" 2>&1 | tail -40; fi
