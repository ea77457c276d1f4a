#!/usr/bin/env bash
# tools/diag/link_time.sh [N]: the split compile's link step of the L1
# row_sum solution, run N times (default 10) as the plan has it (gold where
# ld.gold exists) and N times with the default linker (ld.bfd), in a work
# folder that one kept compile left (KA_CUDAC_KEEP=1): the wall seconds of
# each run, then both medians. A diagnostic for docs/compile.md, section 3,
# item 8; needs nvcc and the build (BUILD, default build).
set -u
N=${1:-10}
BUILD=${BUILD:-build}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
{ echo "// link_time $RANDOM"; cat bank/public/L1/row_sum/solutions/cuda.cu; } >"$d/k.cu"
KA_CUDAC_KEEP=1 "$BUILD/ka" grade --target cuda --task bank/public/L1/row_sum --kernel "$d/k.cu" \
	--workdir "$d/w" --json "$d/g.json" --record-only tests/data/cuda/h200_device.json 2>"$d/keep.log" >/dev/null
w=$(sed -n 's/^cudac: kept //p' "$d/keep.log")
[ -n "$w" ] && [ -f "$w/phases.plan" ] || { echo "link_time: no kept split compile: $(tail -3 "$d/keep.log")"; exit 1; }
mapfile -t args < <(awk '/^step /{f = ($2 == "link")} f && /^arg /{sub(/^arg /, ""); print}' "$w/phases.plan")
bfd=()
for a in "${args[@]}"; do [ "$a" = -fuse-ld=gold ] || bfd+=("$a"); done
cd "$w" || exit 1
run() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || echo "link_time: failed: $*" >&2; t1=$(date +%s.%N); awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.1f\n", (a - b) * 1000 }'; }
med() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for i in $(seq "$N"); do run "${args[@]}"; done >"$d/plan.txt"
for i in $(seq "$N"); do run "${bfd[@]}"; done >"$d/bfd.txt"
echo "link as planned (${args[1]}): ms $(paste -sd' ' "$d/plan.txt"); median $(med <"$d/plan.txt")"
echo "link with ld.bfd: ms $(paste -sd' ' "$d/bfd.txt"); median $(med <"$d/bfd.txt")"
