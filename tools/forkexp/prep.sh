#!/bin/bash
# tools/forkexp/prep.sh TEMPLATE SRC DIR: a work folder DIR made from the
# kept split-compile folder TEMPLATE (KA_CUDAC_KEEP=1), with SRC as
# candidate.cu and its three preprocessed files (the cpp steps run again).
set -e
H=$(cd "$(dirname "$0")" && pwd)
T=$1
rm -rf "$3"
mkdir -p "$3/keep" "$3/logs"
cp -r "$T/include" "$T/phases.plan" "$3/"
cp "$T/keep/candidate.module_id" "$3/keep/"
cp "$2" "$3/candidate.cu"
cd "$3"
for s in "cpp candidate.compute_90.cpp1.ii" "cpp candidate.compute_90a.cpp1.ii" "cpp candidate.cpp4.ii"; do
	"$H/step.sh" phases.plan "$s" >/dev/null 2>&1 || echo "prep: $s failed for $2"
done
