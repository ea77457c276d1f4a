/* bank_split.h: the train/dev split of a bank, recorded in <bank>/splits.json
 * (schema "ka-splits/1", docs/bank.md). Assignment is deterministic: within
 * each tier tasks are ordered by util_hash64(name, seed) and the first ones in
 * that order go to dev until the tier's dev share is reached (every tier of two
 * or more tasks gets both splits). Tasks already recorded keep their split, so
 * adding a task never moves another. Tracks ask for a split's task list with
 * bank_split_tasks. This module does not load gold or compile anything. */
#ifndef KA_BANK_SPLIT_H
#define KA_BANK_SPLIT_H

#include <stdint.h>

#include "bank.h"
#include "util.h"

#define BANK_SPLIT_SCHEMA "ka-splits/1"
#define BANK_SPLIT_FILE "splits.json"
#define BANK_SPLIT_DEFAULT_SEED 1
#define BANK_SPLIT_DEFAULT_FRAC 0.8
#define BANK_SPLIT_MAX_SEED ((uint64_t)1 << 53) /* a JSON integer every reader keeps */

enum bank_split_kind { BANK_SPLIT_NONE = -1, BANK_SPLIT_TRAIN = 0, BANK_SPLIT_DEV = 1 };

/* One task of a split: its name, tier and split. */
struct bank_split_entry {
	char name[32];
	char tier[8];
	enum bank_split_kind split;
};

/* A split record: what splits.json holds. Entries sorted by tier, then name.
 * Owned by the struct (bank_split_free). */
struct bank_split {
	uint64_t seed;
	double train_frac;
	int n;
	struct bank_split_entry *tasks;
};

/* "train", "dev" or "none". */
const char *bank_split_name(enum bank_split_kind k);

/* The dev count a tier of n tasks aims at: 0 for n < 2, else
 * round(n * (1 - train_frac)) clamped to [1, n - 1]. */
int bank_split_dev_target(int n, double train_frac);

/* Assign every entry whose split is BANK_SPLIT_NONE, leaving the others as
 * they are: per tier, unassigned entries in order of util_hash64(name, seed)
 * (ties by name) go to dev while the tier's dev count is below
 * bank_split_dev_target(tier size), else to train. Pure function of the
 * entries, seed and train_frac (0 < train_frac < 1); reorders nothing. */
void bank_split_assign(struct bank_split_entry *ents, int n, uint64_t seed, double train_frac);

/* Read dir/splits.json into *s (zero it first). 1 if the file does not exist
 * (s untouched), 0 on success, -1 with e ("<file>: <field>: <problem>"). */
int bank_split_read(const char *bank_dir, struct bank_split *s, struct ka_err *e);

/* Write s to dir/splits.json (atomically), one task a line, sorted by tier
 * and name; the same s always gives the same bytes. 0 or -1 with e. */
int bank_split_write(const char *bank_dir, const struct bank_split *s, struct ka_err *e);

/* Bring the bank's split up to date: load every task of bank_dir (names and
 * tiers), keep the recorded split of those already in splits.json, assign
 * the new ones, drop entries whose task is gone, and write the file.
 * seed/train_frac apply when there is no file yet; with a file, passing
 * values that differ from its own (have_seed/have_frac set) is an error, as
 * that would move tasks. *s gets the result (bank_split_free); *n_new and
 * *n_gone (may be NULL) count the tasks added and dropped. 0 or -1 with e. */
int bank_split_update(const char *bank_dir, uint64_t seed, int have_seed, double train_frac,
		      int have_frac, struct bank_split *s, int *n_new, int *n_gone,
		      struct ka_err *e);

/* The split of task name in s, or BANK_SPLIT_NONE. */
enum bank_split_kind bank_split_of(const struct bank_split *s, const char *name);

/* Keep in l only the task folders of split (name "train", "dev" or "all"),
 * according to bank_dir/splits.json. A task of l missing from the file, or
 * no file, is an error ("run 'ka bank split'"). 0 or -1 with e. */
int bank_split_filter(const char *bank_dir, const char *split, struct bank_list *l,
		      struct ka_err *e);

/* The task folders of bank_dir in split ("train", "dev" or "all"), sorted
 * by path: bank_scan then bank_split_filter. out is overwritten. 0 or -1. */
int bank_split_tasks(const char *bank_dir, const char *split, struct bank_list *out,
		     struct ka_err *e);

void bank_split_free(struct bank_split *s);

#endif
