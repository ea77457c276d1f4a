#!/usr/bin/env bash
# diagnostic: the L1 capability track on CUDA (k=2, no timing) RUNS times,
# with a watchdog that dumps the state of compile processes older than 20 s.
set -u
OUT=${1:-out/hang}; RUNS=${RUNS:-3}
mkdir -p "$OUT"
watch() {
	local seen=""
	while sleep 3; do
		for p in $(ps -eo pid=,etimes=,comm= | awk '$2 > 20 && $3 ~ /cicc|cudafe|ptxas|nvcc|fatbinary|nvlink|ka-cudaphases|gcc|cc1/ {print $1}'); do
			case " $seen " in *" $p "*) continue ;; esac
			seen="$seen $p"
			{
				echo "=== $(date +%T) pid $p"
				ps -o pid,ppid,pgid,stat,wchan:32,etimes,time,args -p "$p"
				cat /proc/$p/stack 2>/dev/null | head -20
				echo "syscall: $(cat /proc/$p/syscall 2>/dev/null)"
				grep -E "State|Threads|SigBlk|NSpid" /proc/$p/status 2>/dev/null
				ls -l /proc/$p/fd 2>/dev/null | head -12
			} >>"$OUT/watch.txt" 2>&1
		done
	done
}
for i in $(seq 1 "$RUNS"); do
	watch & wp=$!
	t0=$(date +%s)
	"$KA" --track capability --api-model archive:bank/public --tier L1 --target cuda --k 2 \
		--no-timing --out "$OUT/run$i" --verbose >"$OUT/run$i.out" 2>"$OUT/run$i.err"
	echo "run $i: exit $? in $(( $(date +%s) - t0 ))s; $(grep -c compile_error "$OUT/run$i.err") compile errors; $(tail -2 "$OUT/run$i.err" | head -1)"
	ps -eo pid,ppid,stat,etimes,args | grep -E "cudaphases|cicc|cudafe" | grep -v grep | head -5
	kill $wp 2>/dev/null; wait $wp 2>/dev/null
	grep compile_error "$OUT/run$i.err" | head -3
done
[ -f "$OUT/watch.txt" ] && head -c 6000 "$OUT/watch.txt"
