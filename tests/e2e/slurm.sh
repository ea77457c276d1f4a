#!/usr/bin/env bash
# slurm.sh: `ka slurm` and `ka merge` on a single-node Slurm that this test
# starts itself (tests/e2e/lib/slurm_single.sh: slurmctld and slurmd in the
# foreground, auth/none, no munge, no systemd):
#   (a) a 4-shard capability run on PoCL (archive model, L1, short timing),
#       submitted as one sbatch --array job plus an afterok merge job, gives
#       the same per-sample verdicts and the same non-timing aggregates as
#       the same run on one machine, and a scorecard that ka scorecard check
#       accepts; the merged journal is the single-machine run's (the track
#       with the same options and --out finds nothing left to do);
#   (b) a shard that lost work (its DONE marker and a grade removed, as a
#       preempted task would) is the only one submitted again by the same
#       ka slurm command, continues from its journal, and the new merge
#       matches again;
#   (c) bad usage: one line, exit 2.
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
source tests/e2e/lib/slurm_single.sh
tmp=$(mktemp -d)
cleanup() {
	slurm_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
T0=$(date +%s)
# The L1 tier's size (the bank grows): N tasks, dealt round-robin to 4 shards.
N=0
for d in bank/public/L1/*/; do [ -f "$d/task.json" ] && N=$((N + 1)); done
ARGS=(--api-model archive:bank/public --tier L1 --k 1 --target opencl
	--max-seconds 0.2 --min-samples 3 --max-samples 5)

expect() { if [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1: got '$2', want '$3'"; fi; }
sql() {
	python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2"
}
# same A B: the per-sample verdicts and every non-timing aggregate agree.
same() {
	python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def verdicts(s):
    return [(t["name"], t["tier"], [(x["sample"], x["verdict"]) for x in t["samples"]]) for t in s["tasks"]]
problems = []
if verdicts(a) != verdicts(b):
    # Name each sample whose verdict differs, with its phase and detail, so a
    # failure says what went wrong and where.
    def by_sample(s):
        return {(t["name"], x["sample"]): x for t in s["tasks"] for x in t["samples"]}
    sa, sb = by_sample(a), by_sample(b)
    diff = []
    for key in sorted(set(sa) | set(sb)):
        x, y = sa.get(key, {}), sb.get(key, {})
        if x.get("verdict") != y.get("verdict"):
            diff.append(f"{key[0]}#{key[1]}: {x.get('verdict')} vs {y.get('verdict')} "
                        f"({str(y.get('detail', x.get('detail', '')))[:200]})")
    problems.append("verdicts differ: " + " | ".join(diff[:4]))
for key in ("track", "model", "k", "seed", "target", "bank"):
    if a[key] != b[key]:
        problems.append(f"{key}: {a[key]} != {b[key]}")
for tier in sorted(set(a["aggregates"]) | set(b["aggregates"])):
    for f in ("n_tasks", "n_samples", "correct", "pass_at_k"):
        x, y = a["aggregates"].get(tier, {}).get(f), b["aggregates"].get(tier, {}).get(f)
        if x != y:
            problems.append(f"aggregates.{tier}.{f}: {x} != {y}")
print("; ".join(problems) if problems else "same")
PY
}
# wait_jobs: until the queue is empty (at most 400 s).
wait_jobs() {
	local i
	for i in $(seq 1 800); do
		[ -z "$(squeue -h 2>/dev/null)" ] && return 0
		sleep 0.5
	done
	return 1
}

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null; then
	echo "SKIP slurm: slurmctld, slurmd or sbatch not installed (tools/setup.sh installs them)"
	exit 0
fi

# (c) usage first: no Slurm needed.
"$KA" slurm --track capability "${ARGS[@]}" --out "$tmp/x" >"$tmp/o" 2>&1
expect usage_shards "$?:$(wc -l <"$tmp/o")" "2:1"
"$KA" slurm --track capability "${ARGS[@]}" --shards 99 --out "$tmp/x" >"$tmp/o" 2>&1
expect usage_too_many_shards "$?:$(grep -c "the run has $N tasks" "$tmp/o")" "2:1"
"$KA" slurm --track capability "${ARGS[@]}" --shards 2 --fresh --out "$tmp/x" >"$tmp/o" 2>&1
expect usage_fresh "$?" "2"

# The same work on one machine.
"$KA" --track capability "${ARGS[@]}" --out "$tmp/single" --quiet >"$tmp/single.log" 2>&1
expect single_run "$?" "0"

if ! slurm_start "$tmp/slurm"; then
	echo "FAIL slurm_start: $SLURM_WHY"
	exit 1
fi
echo "PASS slurm_start"

# (a) four shards, one array job, merged by the afterok job.
"$KA" slurm --track capability "${ARGS[@]}" --shards 4 --partition ka --out "$tmp/run" >"$tmp/submit" 2>&1
rc=$?
expect submit "$rc:$(grep -c '^submitted array job' "$tmp/submit"):$(grep -c '^submitted merge job' "$tmp/submit")" "0:1:1"
grep -q -- '--array=0-3' "$tmp/run/slurm.sbatch" && grep -q 'partition=ka' "$tmp/run/slurm.sbatch"
expect sbatch_script "$?" "0"
wait_jobs || echo "FAIL jobs_finish: the queue is not empty after 400 s: $(squeue -h | head -5 | tr '\n' ' ')"
for i in 0 1 2 3; do
	[ -f "$tmp/run/shard-$i/DONE" ] || echo "FAIL shard_$i: not done: $(tail -n 5 "$tmp"/run/shard-$i/slurm-*.log 2>/dev/null | tr '\n' ' ' | head -c 500)"
done
expect shard_tasks "$(sql "$tmp/run/shard-0/journal.sqlite" 'select count(*) from grades'):$(sql "$tmp/run/shard-3/journal.sqlite" 'select count(*) from grades')" "$(((N + 3) / 4)):$((N / 4))"
if [ -f "$tmp/run/scorecard.json" ]; then
	expect merged_equals_single "$(same "$tmp/single/scorecard.json" "$tmp/run/scorecard.json")" "same"
	"$KA" scorecard check "$tmp/run/scorecard.json" >/dev/null 2>&1
	expect merged_check "$?" "0"
	expect merged_results "$(wc -l <"$tmp/run/results.jsonl")" "$N"
	expect merged_journal "$(sql "$tmp/run/journal.sqlite" 'select count(*) from grades'):$(sql "$tmp/run/journal.sqlite" 'select count(*) from starts')" "$N:4"
else
	echo "FAIL merge: no merged scorecard: $(cat "$tmp"/run/merge-*.log 2>/dev/null | head -c 500)"
fi
# The merged journal is the single-machine run: the track continues it with nothing left.
"$KA" --track capability "${ARGS[@]}" --out "$tmp/run" >"$tmp/again" 2>&1
expect merged_is_the_run "$?:$(grep -c "$N of $N samples graded, 0 replies to grade, 0 requests to send" "$tmp/again")" "0:1"

# (b) shard 2 loses a grade and its DONE, as a preempted task would. It holds
# tasks 2, 6, 10, ... of the tier: (N + 1) / 4 of them.
rm -f "$tmp/run/shard-2/DONE" "$tmp/run/scorecard.json"
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("delete from grades where rowid = (select max(rowid) from grades)"); c.commit()' "$tmp/run/shard-2/journal.sqlite"
"$KA" slurm --track capability "${ARGS[@]}" --shards 4 --partition ka --out "$tmp/run" >"$tmp/resubmit" 2>&1
expect resubmit_only_shard_2 "$?:$(grep -c '4 shards, 1 to run: 2$' "$tmp/resubmit")" "0:1"
wait_jobs || echo "FAIL jobs_finish_again: the queue is not empty after 400 s"
expect shard_2_continued "$(sql "$tmp/run/shard-2/journal.sqlite" 'select count(*) from starts'):$(sql "$tmp/run/shard-2/journal.sqlite" 'select count(*) from grades'):$(sql "$tmp/run/shard-2/journal.sqlite" 'select max(sends) from requests')" "2:$(((N + 1) / 4)):1"
grep -q 'resuming the run' "$tmp"/run/shard-2/slurm-*.log
expect shard_2_resumed_log "$?" "0"
if [ -f "$tmp/run/scorecard.json" ]; then
	expect remerged_equals_single "$(same "$tmp/single/scorecard.json" "$tmp/run/scorecard.json")" "same"
else
	echo "FAIL remerge: no merged scorecard: $(cat "$tmp"/run/merge-*.log 2>/dev/null | tail -c 500)"
fi
# Nothing left: the same command submits nothing.
"$KA" slurm --track capability "${ARGS[@]}" --shards 4 --partition ka --out "$tmp/run" >"$tmp/none" 2>&1
expect nothing_left "$?:$(grep -c '4 shards, 0 to run' "$tmp/none"):$(grep -c submitted "$tmp/none")" "0:1:0"
# Another plan in the same folder is refused.
"$KA" slurm --track capability "${ARGS[@]}" --shards 3 --out "$tmp/run" >"$tmp/o" 2>&1
expect other_plan_refused "$?:$(grep -c 'holds another sharded run' "$tmp/o")" "2:1"
echo "# slurm.sh took $(($(date +%s) - T0)) s"
