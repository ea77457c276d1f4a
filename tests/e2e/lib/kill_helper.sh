# shellcheck shell=bash
# kill_helper.sh (sourced): kill_helper PID COMM AGE_MS [WAIT_S]: SIGKILL, as
# the OOM killer would, the first descendant of PID named COMM (its /proc
# comm, 15 characters at most) seen alive AGE_MS milliseconds apart (so a
# quick run of it, that ends in milliseconds, is let be), looking for
# WAIT_S seconds at most (default 60). Prints the pid it killed, or
# nothing; 0 when it killed one.
kill_helper() {
	local pid=$1 comm=$2 age_us=$(($3 * 1000)) wait=${4:-60} c now
	local -A first=()
	local end=$((${EPOCHREALTIME/./} + wait * 1000000))
	while [ "${EPOCHREALTIME/./}" -lt "$end" ] && kill -0 "$pid" 2>/dev/null; do
		now=${EPOCHREALTIME/./}
		for c in $(_kill_helper_tree "$pid"); do
			[ "$(cat /proc/"$c"/comm 2>/dev/null)" = "$comm" ] || continue
			if [ -z "${first[$c]:-}" ]; then
				first[$c]=$now
			elif [ $((now - first[$c])) -ge "$age_us" ] && kill -KILL "$c" 2>/dev/null; then
				echo "$c"
				return 0
			fi
		done
		sleep 0.02
	done
	return 1
}
_kill_helper_tree() { # every descendant of $1
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		_kill_helper_tree "$c"
	done
}
