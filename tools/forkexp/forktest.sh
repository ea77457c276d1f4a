#!/bin/bash
# tools/forkexp/forktest.sh SHIM STEP INPUT N DIR...: for each work folder
# DIR (prep.sh), STEP run fresh in DIR.fresh, and as a forked child of one
# server in DIR.fork: the server is STEP run with the experiment shim SHIM
# (fsrv_exp.c) on the first N bytes of DIR1/INPUT only, stopped where it
# would read byte N; per DIR it forks a child that continues on DIR's INPUT
# from byte N. Prints each run's status and time, then every output file that
# differs (DIFF) or that only the forked run wrote (EXTRA).
H=$(cd "$(dirname "$0")" && pwd)
shim=$1; step=$2; input=$3; N=$4; shift 4
srv=$(mktemp -d /tmp/forkexp-srv-XXXXXX)
cp -r "$1/." "$srv/"
rm -f "$srv"/keep/candidate.compute_9* "$srv"/keep/*.ii
head -c "$N" "$1/$input" >"$srv/$input"
mkfifo "$srv/ctl" "$srv/ack"
for d in "$@"; do
	rm -rf "$d.fresh" "$d.fork"
	cp -r "$d" "$d.fresh"
	cp -r "$d" "$d.fork"
	(cd "$d.fresh" && t0=$(date +%s%N) && "$H/step.sh" phases.plan "$step" >fork.log 2>&1
	 echo "fresh $d status $? ms $((($(date +%s%N) - t0) / 1000000))")
done
(cd "$srv" && "$H/step.sh" phases.plan "$step" env FSRV_INPUT="$input" FSRV_N="$N" \
	FSRV_CTL="$srv/ctl" FSRV_ACK="$srv/ack" LD_PRELOAD="$shim" >srv.log 2>&1
 echo "server exit $?") &
exec 3>"$srv/ctl"
exec 4<"$srv/ack"
for d in "$@"; do
	echo "$d.fork" >&3
	read -r l <&4
	echo "fork $l"
done
echo quit >&3
exec 3>&-
wait
for d in "$@"; do
	(cd "$d.fresh" && find . -type f ! -name '*.ii' | sort) | while read -r f; do
		cmp -s "$d.fresh/$f" "$d.fork/$f" || echo "DIFF $d $f"
	done
	(cd "$d.fork" && find . -type f -newer phases.plan | sort) | while read -r f; do
		[ -e "$d.fresh/$f" ] || echo "EXTRA $d $f"
	done
done
rm -rf "$srv"
echo compared
