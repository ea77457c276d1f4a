#!/usr/bin/env bash
# frontier_gpu.sh: one round of `ka --track frontier` (track 5) on a device,
# against tools/fakeserver.py's fsolver and proposer personas on loopback,
# and the validation figures of every proposal (docs/frontier.md, "On a GPU
# machine").
#
# Usage: tools/frontier_gpu.sh OUT [--target cuda|opencl] [--timing] [--limit S]
#   --target  the grader's target (default cuda: needs an NVIDIA GPU and
#             ka-run-cuda beside ka; stops at once with exit 3 without them)
#   --timing  time the graded samples too (default --no-timing: correctness
#             only, so the proposals' outcomes are the documented ones on
#             every target; see docs/frontier.md)
#   --limit   wall-clock cap on the ka run in seconds (default 300)
# Environment: KA (default build/ka), KA_HOME (default the repository root).
# The frontier is seeded with bank/public/L1/silu_scale, the held-out bank is
# bank/public/L1/gelu_tanh; the proposer answers the seven replies of
# tests/data/frontier/ (docs/frontier.md, "Tests"). Writes under OUT:
#   scorecard.json, validation.json  the run's scorecard and validation records
#   run.log                          ka's stdout and stderr
#   summary.json, summary.md         the figures (tools/frontier_summary.py)
#   run/                             the run's --out folder
# Exit: 0 when ka and the summary succeed, 2 usage, 3 no GPU for cuda, else
# ka's exit status (124 when it ran past --limit). Needs bash, python3
# (standard library) and coreutils; no network beyond 127.0.0.1.
set -u
usage() {
	echo "usage: tools/frontier_gpu.sh OUT [--target cuda|opencl] [--timing] [--limit S]" >&2
	exit 2
}
[ $# -ge 1 ] || usage
case $1 in -*) usage ;; esac
out=$1
shift
target=cuda timing=--no-timing limit=300
while [ $# -gt 0 ]; do
	case $1 in
	--target) [ $# -ge 2 ] || usage; target=$2; shift 2 ;;
	--timing) timing=; shift ;;
	--limit) [ $# -ge 2 ] || usage; limit=$2; shift 2 ;;
	*) usage ;;
	esac
done
case $target in cuda | opencl) ;; *) usage ;; esac
case $limit in '' | *[!0-9]*) usage ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
KA=${KA:-$root/build/ka}
case $KA in /*) ;; *) KA=$root/$KA ;; esac
export KA_HOME=${KA_HOME:-$root}
if [ ! -x "$KA" ]; then
	echo "frontier_gpu.sh: no ka at $KA (build it, or set KA)" >&2
	exit 2
fi
if [ "$target" = cuda ]; then
	if [ ! -x "$(dirname "$KA")/ka-run-cuda" ]; then
		echo "frontier_gpu.sh: --target cuda needs $(dirname "$KA")/ka-run-cuda (build with CUDA); stopping" >&2
		exit 3
	fi
	if ! { [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; }; then
		echo "frontier_gpu.sh: --target cuda needs an NVIDIA GPU and there is none here (no /dev/nvidia0, nvidia-smi -L fails); stopping. Use --target opencl on PoCL." >&2
		exit 3
	fi
fi

mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
rm -rf "$out/run" "$out/work"
mkdir -p "$out/work/seed/L1" "$out/work/held/L1" "$out/work/home"
cp -r "$root/bank/public/L1/silu_scale" "$out/work/seed/L1/"
cp -r "$root/bank/public/L1/gelu_tanh" "$out/work/held/L1/"
srv=
cleanup() {
	exec 3>&- 2>/dev/null
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	rm -f "$out/work/ctl"
}
trap cleanup EXIT
unset OPENAI_API_KEY KA_OPENAI_API_KEY OPENAI_BASE_URL KA_PRICES
export HOME=$out/work/home

# The fake server exits when its stdin (the fifo held open on fd 3) closes.
mkfifo "$out/work/ctl"
python3 "$root/tools/fakeserver.py" --bank "$out/work/seed" \
	--frontier-fixtures "$root/tests/data/frontier" --exit-on-stdin-eof \
	<"$out/work/ctl" >"$out/work/port" 2>"$out/work/server.err" &
srv=$!
exec 3>"$out/work/ctl"
for _ in $(seq 100); do [ -s "$out/work/port" ] && break; sleep 0.1; done
port=$(head -1 "$out/work/port")
if [ -z "$port" ]; then
	echo "frontier_gpu.sh: the fake server did not start: $(tail -3 "$out/work/server.err")" >&2
	exit 1
fi
M() { echo "openai:$1@http://127.0.0.1:$port/v1"; }

echo "frontier_gpu.sh: ka --track frontier --target $target --rounds 1 ${timing:-(timed)} (limit ${limit} s)"
t0=$(date +%s.%N)
# shellcheck disable=SC2086 # $timing is one flag or none
timeout --kill-after=10 "$limit" "$KA" --track frontier --api-model "$(M fsolver)" \
	--proposer "$(M proposer)" --rounds 1 --k 2 --proposals 7 --gold-seconds 8 \
	--target "$target" $timing --train "$out/work/seed" --heldout "$out/work/held" \
	--out "$out/run" >"$out/run.log" 2>&1
rc=$?
wall=$(python3 -c 'import sys, time; print("%.2f" % (time.time() - float(sys.argv[1])))' "$t0")
if [ "$rc" -ne 0 ]; then
	[ "$rc" -eq 124 ] && echo "frontier_gpu.sh: ka ran past ${limit} s" >&2
	echo "frontier_gpu.sh: ka exited $rc after $wall s; the end of $out/run.log:" >&2
	tail -15 "$out/run.log" >&2
	exit "$rc"
fi
cp "$out/run/scorecard.json" "$out/scorecard.json"
cp "$out/run/frontier/validation.json" "$out/validation.json"
python3 "$root/tools/frontier_summary.py" "$out/run" "$out" --target "$target" --wall-s "$wall" ||
	exit 1
echo "frontier_gpu.sh: $out/summary.md, $out/summary.json ($wall s)"
