#!/bin/bash
# tools/forkexp/timing.sh SHIM STEP INPUT N REPS DIR...: wall and CPU time of
# STEP run fresh (REPS times per DIR, /usr/bin/time) and of a forked child of
# one server stopped at byte N (as forktest.sh; the shim reports each child's
# wall time, CPU time and peak RSS). cudafe++ runs with huge pages, as in
# the split path.
H=$(cd "$(dirname "$0")" && pwd)
shim=$1; step=$2; input=$3; N=$4; reps=$5; shift 5
senv=(LANG=C)
[ "$step" = "cudafe++" ] && senv=(GLIBC_TUNABLES=glibc.malloc.hugetlb=1)
srv=$(mktemp -d /tmp/forkexp-srv-XXXXXX)
cp -r "$1/." "$srv/"
rm -f "$srv"/keep/candidate.compute_9* "$srv"/keep/*.ii
head -c "$N" "$1/$input" >"$srv/$input"
mkfifo "$srv/ctl" "$srv/ack"
for d in "$@"; do for r in $(seq "$reps"); do
	(cd "$d" && /usr/bin/time -o "$srv/t" -f "fresh ${d##*/} wall_s %e cpu_s %U + %S" \
		"$H/step.sh" phases.plan "$step" env "${senv[@]}" >/dev/null 2>&1; cat "$srv/t")
done; done
t0=$(date +%s%N)
(cd "$srv" && "$H/step.sh" phases.plan "$step" env "${senv[@]}" FSRV_INPUT="$input" FSRV_N="$N" \
	FSRV_CTL="$srv/ctl" FSRV_ACK="$srv/ack" LD_PRELOAD="$shim" >srv.log 2>&1) &
exec 3>"$srv/ctl"
exec 4<"$srv/ack"
echo "server at the fork point after $((($(date +%s%N) - t0) / 1000000)) ms; $(cat "$srv/srv.log" | tr '\n\t' '  ')"
for d in "$@"; do for r in $(seq "$reps"); do
	echo "$d" >&3
	read -r l <&4
	echo "fork ${l##*/}"
done; done
echo quit >&3
exec 3>&-
wait
rm -rf "$srv"
