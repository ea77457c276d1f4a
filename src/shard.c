/* shard.c: the plan of a sharded run (see shard.h): listing the tasks a plan
 * splits, reading the plan back. Writes nothing. */
#include "shard.h"

#include <stdlib.h>
#include <string.h>

#include "task.h"

int shard_list_tasks(const char *bank, const char *tier, struct bank_list *out, struct ka_err *e)
{
	struct bank_list all = {0};
	if (bank_scan(bank, &all, e))
		return -1;
	int rc = 0;
	out->dirs = xcalloc((size_t)(all.n ? all.n : 1), sizeof *out->dirs);
	for (int i = 0; i < all.n; i++) {
		struct ka_task *t = task_load(all.dirs[i], e);
		if (!t) {
			rc = -1;
			break;
		}
		if (!tier || !strcmp(t->tier, tier))
			out->dirs[out->n++] = xstrdup(all.dirs[i]);
		task_free(t);
	}
	bank_list_free(&all);
	return rc;
}

int shard_plan_load(const char *out, json_t **plan, struct ka_err *e)
{
	char *path = xasprintf("%s/slurm.json", out);
	json_error_t je;
	int rc = -1;
	*plan = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!*plan) {
		ka_err_set(e, "%s: %s (not the folder of a ka slurm run)", path, je.text);
		goto out;
	}
	const json_t *shards = json_object_get(*plan, "shards");
	if (strcmp(json_string_value(json_object_get(*plan, "schema")) ?: "", SHARD_SCHEMA) ||
	    !json_is_string(json_object_get(*plan, "out")) ||
	    !json_is_string(json_object_get(*plan, "bank")) ||
	    !json_is_array(json_object_get(*plan, "args")) || !json_is_array(shards) ||
	    json_array_size(shards) < 1 || json_array_size(shards) > SHARD_MAX) {
		ka_err_set(e, "%s: not a %s plan", path, SHARD_SCHEMA);
		json_decref(*plan);
		*plan = NULL;
		goto out;
	}
	rc = 0;
out:
	free(path);
	return rc;
}

char *shard_dir(const json_t *plan, int i)
{
	return xasprintf("%s/shard-%d", json_string_value(json_object_get(plan, "out")), i);
}
