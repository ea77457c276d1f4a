/* shard.h: the plan of a sharded run (ka slurm, ka shard, ka merge;
 * docs/scaleout.md). A sharded capability run splits the tasks of the bank
 * (tier-filtered, in bank order) round-robin into N shards; shard i is an
 * ordinary capability run in OUT/shard-i over a bank folder of links to its
 * tasks (OUT/shard-i/bank), with its own journal, so a preempted shard
 * started again continues. OUT/slurm.json holds the plan; ka merge turns the
 * shards back into the run a single machine would have made. */
#ifndef KA_SHARD_H
#define KA_SHARD_H

#include <jansson.h>

#include "bank.h"
#include "util.h"

#define SHARD_SCHEMA "ka-shards/1"
#define SHARD_MAX 1024

/* The task folders of bank (a real path) whose tier is tier (NULL: all), in
 * bank_scan order, appended to out (zero it first; bank_list_free). 0 or -1
 * with e. */
int shard_list_tasks(const char *bank, const char *tier, struct bank_list *out, struct ka_err *e);

/* Read OUT/slurm.json (a new reference into *plan). 0, or -1 with e
 * ("OUT/slurm.json: ..."; not a sharded run's folder). */
int shard_plan_load(const char *out, json_t **plan, struct ka_err *e);

/* "OUT/shard-I" for shard i of the plan's out folder. Caller frees. */
char *shard_dir(const json_t *plan, int i);

#endif
