#!/bin/bash
# tools/forkexp/step.sh PLAN STEP [PREFIX...]: run one step of a ka-cudaphases
# plan (its `env` lines and `arg` lines) in the current folder, outside the
# jail, with PREFIX before the command (e.g. `env LD_PRELOAD=...`, `strace`).
# Part of the fork-server experiment of docs/compile.md, section 7.
plan=$1; name=$2; shift 2
mapfile -t envs < <(sed -n 's/^env //p' "$plan")
mapfile -t args < <(awk -v n="$name" '/^step /{on = (substr($0,6) == n)} on && /^arg /{print substr($0,5)}' "$plan")
exec env -i "${envs[@]}" "$@" "${args[@]}"
