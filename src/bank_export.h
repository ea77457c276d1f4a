/* bank_export.h: the bank as a dataset (`ka bank export --format jsonl`):
 * OUT/tasks.jsonl, one JSON record per task, and OUT/README.md, a dataset
 * card (fields, license note, how to load it with the Hugging Face datasets
 * library). Every record has the same fields with the same JSON types, so
 * column-typed readers (Arrow) load it; docs/bank.md documents the record.
 * This module reads tasks and splits.json; it computes nothing. */
#ifndef KA_BANK_EXPORT_H
#define KA_BANK_EXPORT_H

#include <jansson.h>

#include "task.h"
#include "util.h"

#define BANK_EXPORT_SCHEMA "ka-task-record/1"

/* The record of task t (split: "train", "dev" or "none"). New reference. */
json_t *bank_export_record(const struct ka_task *t, const char *split);

/* Export every task of bank_dir into out_dir (created if missing):
 * tasks.jsonl (records in bank_scan order, one per line, keys in a fixed
 * order) and README.md. A bank without splits.json exports split "none".
 * *n_tasks gets the count. 0, or -1 with e (unreadable bank, a task that does
 * not load, a write that failed). */
int bank_export_jsonl(const char *bank_dir, const char *out_dir, int *n_tasks, struct ka_err *e);

#endif
