#!/usr/bin/env bash
# runner_cache.sh: the caches a grade writes are bounded (docs/grader.md,
# "Durability"). PoCL keeps every kernel it compiles in its cache folder
# (~/.cache/pocl), and a kernel with a large initialised __constant array
# graded ok and left its size there per kernel, forever.
#  - private: a runner session's PoCL cache is its own folder under the
#    workdir (pocl-XXXXXX), removed when the session ends; ~/.cache/pocl is
#    never written;
#  - big_table: kernels that write 80 MiB to it at their first launch are
#    launch_error ("over the cap of 64 MiB"), and their entries go at once;
#  - total: past the folder's total cap (1 GiB; KA_RUNNER_CACHE_MB=1 here)
#    it is emptied and the grade goes on (ok);
#  - killed: a ka killed during a grade leaves its folder; the next start
#    removes it once it is an hour old, and keeps a young one (another ka's);
#  - compile cache: the OpenCL host compile keeps the object only (no
#    -save-temps intermediates). Objects over 64 MiB are compile_error and
#    not kept: grade_opencl.sh and grade_cuda_record.sh (big_host_object).
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/ka-run-opencl" ] || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP runner_cache: no OpenCL runner or platform"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp/home
mkdir -p "$HOME"
unset POCL_CACHE_DIR XDG_CACHE_HOME
expect() { if [ "$2" = "$3" ]; then echo "PASS runner_cache/$1"; else echo "FAIL runner_cache/$1: got '$2', want '$3'"; fi; }
T=bank/public/L1/silu_scale
W=$tmp/w
grade() { # name kernel args...
	local n=$1 k=$2
	shift 2
	"$KA" grade --task "$T" --kernel "$k" --workdir "$W" --json "$tmp/$n.json" "$@" \
		>"$tmp/$n.out" 2>"$tmp/$n.err"
}
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null; }
caches() { find "$W" -maxdepth 1 -name 'pocl-*' -printf '%f\n' | sort | tr '\n' ' '; }

grade private "$T/solutions/opencl.c" --no-timing
expect private_ok "$(field "$tmp/private.json" verdict)" ok
expect private_removed "$(caches)" ""
expect private_home_untouched "$(find "$HOME" -path '*pocl*' | head -1)" ""
expect compile_cache_object_only "$(ls "$W"/cl-*/ | sort | uniq | tr '\n' ' ')" "candidate.so "

grade big_table tests/data/runner_cache/big_table.c --no-timing
expect big_table "$(field "$tmp/big_table.json" verdict):$(grep -c 'wrote 80 MiB to the driver.s cache, over the cap of 64 MiB' "$tmp/big_table.json")" "launch_error:1"
expect big_table_not_kept "$(caches)$([ "$(du -sm "$W" | cut -f1)" -lt 16 ] && echo small || du -sh "$W")" small

# the same with a 2 MiB table: under the 64 MiB cap, over a total cap of 1 MiB
sed 's/80 << 20/2 << 20/g' tests/data/runner_cache/big_table.c >"$tmp/mid_table.c"
KA_RUNNER_CACHE_MB=1 KA_RUNNER_LOG=1 grade total "$tmp/mid_table.c" --no-timing
expect total_ok "$(field "$tmp/total.json" verdict)" ok
expect total_emptied "$([ "$(grep -c 'runner: private cache .*/pocl-.* emptied: [0-9]* KiB, over the cap of 1024 KiB' "$tmp/total.err")" -ge 1 ] && echo yes)" yes

# A ka killed while it grades leaves its folder (its runner dies with it).
"$KA" grade --task "$T" --kernel "$T/solutions/opencl.c" --workdir "$W" --max-seconds 60 \
	--min-samples 400 >"$tmp/killed.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -n "$(caches)" ] && break; sleep 0.1; done
sleep 2
{
	kill -9 "$pid"
	wait "$pid"
} 2>/dev/null
left=$(caches)
expect killed_left "$(echo "$left" | wc -w)" 1
mkdir "$W/pocl-young"
touch -d '2 hours ago' "$W/$(echo $left)"
grade after "$T/solutions/opencl.c" --no-timing
expect killed_swept "$(field "$tmp/after.json" verdict):$(caches)" "ok:pocl-young "
