/* bank_split.c: the train/dev split of a bank (see bank_split.h). The file is
 * written by hand, one task a line, so that it diffs well and the same
 * record always gives the same bytes; it is read strictly through jsonf. */
#include "bank_split.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonf.h"
#include "task.h"

#define BANK_SPLIT_FILE_CAP (4u << 20)

const char *bank_split_name(enum bank_split_kind k)
{
	return k == BANK_SPLIT_TRAIN ? "train" : k == BANK_SPLIT_DEV ? "dev" : "none";
}

int bank_split_dev_target(int n, double train_frac)
{
	if (n < 2)
		return 0;
	int d = (int)lround((double)n * (1.0 - train_frac));
	if (d < 1)
		d = 1;
	if (d > n - 1)
		d = n - 1;
	return d;
}

struct split_order {
	uint64_t h;
	int i;
	const struct bank_split_entry *ents;
};

static int cmp_order(const void *a, const void *b)
{
	const struct split_order *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return strcmp(x->ents[x->i].name, y->ents[y->i].name);
}

void bank_split_assign(struct bank_split_entry *ents, int n, uint64_t seed, double train_frac)
{
	struct split_order *ord = xcalloc((size_t)(n ? n : 1), sizeof *ord);
	for (int i = 0; i < n; i++) {
		/* The first entry of each tier handles the whole tier. */
		int first = 1;
		for (int j = 0; j < i && first; j++)
			first = strcmp(ents[j].tier, ents[i].tier) != 0;
		if (!first)
			continue;
		int size = 0, dev = 0, m = 0;
		for (int j = 0; j < n; j++) {
			if (strcmp(ents[j].tier, ents[i].tier))
				continue;
			size++;
			if (ents[j].split == BANK_SPLIT_DEV)
				dev++;
			if (ents[j].split == BANK_SPLIT_NONE)
				ord[m++] = (struct split_order){
					util_hash64(ents[j].name, strlen(ents[j].name), seed), j,
					ents};
		}
		if (m > 1)
			qsort(ord, (size_t)m, sizeof *ord, cmp_order);
		int target = bank_split_dev_target(size, train_frac);
		for (int k = 0; k < m; k++) {
			int to_dev = dev < target;
			ents[ord[k].i].split = to_dev ? BANK_SPLIT_DEV : BANK_SPLIT_TRAIN;
			dev += to_dev;
		}
	}
	free(ord);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct bank_split_entry *x = a, *y = b;
	int c = strcmp(x->tier, y->tier);
	return c ? c : strcmp(x->name, y->name);
}

static char *split_path(const char *bank_dir)
{
	return xasprintf("%s/%s", bank_dir, BANK_SPLIT_FILE);
}

void bank_split_free(struct bank_split *s)
{
	if (!s)
		return;
	free(s->tasks);
	s->tasks = NULL;
	s->n = 0;
}

int bank_split_read(const char *bank_dir, struct bank_split *s, struct ka_err *e)
{
	char *path = split_path(bank_dir), *text = NULL;
	size_t len = 0;
	json_t *root = NULL;
	struct bank_split r = {0};
	int rc = -1;
	if (access(path, F_OK) != 0 && errno == ENOENT) {
		rc = 1;
		goto done;
	}
	if (util_read_file(path, BANK_SPLIT_FILE_CAP, &text, &len, e))
		goto done;
	json_error_t je;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		ka_err_set(e, "%s: line %d, column %d: invalid JSON: %s", path, je.line, je.column,
			   je.text);
		goto done;
	}
	struct jsonf c = {path, e, 0};
	static const char *const top[] = {"schema", "seed", "train_frac", "tasks", NULL};
	if (jsonf_type(&c, "", root, JSON_OBJECT, "an object") ||
	    jsonf_keys(&c, "", root, top, top))
		goto done;
	const char *schema = json_string_value(json_object_get(root, "schema"));
	if (!schema || strcmp(schema, BANK_SPLIT_SCHEMA)) {
		jsonf_bad(&c, "schema", "expected \"%s\"", BANK_SPLIT_SCHEMA);
		goto done;
	}
	int64_t seed;
	size_t n;
	if (jsonf_int(&c, "seed", json_object_get(root, "seed"), 0, (int64_t)BANK_SPLIT_MAX_SEED,
		      &seed) ||
	    jsonf_number(&c, "train_frac", json_object_get(root, "train_frac"), 0, 1,
			 &r.train_frac))
		goto done;
	if (r.train_frac <= 0 || r.train_frac >= 1) {
		jsonf_bad(&c, "train_frac", "%g is outside (0, 1)", r.train_frac);
		goto done;
	}
	r.seed = (uint64_t)seed;
	json_t *tasks = json_object_get(root, "tasks");
	if (jsonf_array(&c, "tasks", tasks, 0, BANK_MAX_TASKS, &n))
		goto done;
	r.tasks = xcalloc(n ? n : 1, sizeof *r.tasks);
	for (size_t i = 0; i < n; i++) {
		char p[JSONF_PATHLEN];
		snprintf(p, sizeof p, "tasks[%zu]", i);
		json_t *t = json_array_get(tasks, i);
		static const char *const keys[] = {"name", "tier", "split", NULL};
		if (jsonf_type(&c, p, t, JSON_OBJECT, "an object") ||
		    jsonf_keys(&c, p, t, keys, keys))
			goto done;
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *tier = json_string_value(json_object_get(t, "tier"));
		const char *sp = json_string_value(json_object_get(t, "split"));
		if (!name || !*name || strlen(name) >= sizeof r.tasks[0].name) {
			jsonf_bad(&c, p, "name: expected a task name");
			goto done;
		}
		if (!tier || !*tier || strlen(tier) >= sizeof r.tasks[0].tier) {
			jsonf_bad(&c, p, "tier: expected a tier");
			goto done;
		}
		enum bank_split_kind k = !sp			? BANK_SPLIT_NONE
					 : !strcmp(sp, "train") ? BANK_SPLIT_TRAIN
					 : !strcmp(sp, "dev")	? BANK_SPLIT_DEV
								: BANK_SPLIT_NONE;
		if (k == BANK_SPLIT_NONE) {
			jsonf_bad(&c, p, "split: expected \"train\" or \"dev\"");
			goto done;
		}
		if (bank_split_of(&r, name) != BANK_SPLIT_NONE) {
			jsonf_bad(&c, p, "name: '%s' is listed twice", name);
			goto done;
		}
		snprintf(r.tasks[i].name, sizeof r.tasks[i].name, "%s", name);
		snprintf(r.tasks[i].tier, sizeof r.tasks[i].tier, "%s", tier);
		r.tasks[i].split = k;
		r.n = (int)i + 1;
	}
	*s = r;
	memset(&r, 0, sizeof r);
	rc = 0;
done:
	bank_split_free(&r);
	json_decref(root);
	free(text);
	free(path);
	return rc;
}

int bank_split_write(const char *bank_dir, const struct bank_split *s, struct ka_err *e)
{
	struct bank_split_entry *ents = xcalloc((size_t)(s->n ? s->n : 1), sizeof *ents);
	if (s->n)
		memcpy(ents, s->tasks, (size_t)s->n * sizeof *ents);
	if (s->n > 1)
		qsort(ents, (size_t)s->n, sizeof *ents, cmp_entry);
	/* The shortest decimal that reads back as the same double. */
	char frac[32];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(frac, sizeof frac, "%.*g", prec, s->train_frac);
		if (strtod(frac, NULL) == s->train_frac)
			break;
	}
	struct util_buf b = {0};
	util_buf_printf(&b, "{\n  \"schema\": \"%s\",\n  \"seed\": %llu,\n  \"train_frac\": %s,\n",
			BANK_SPLIT_SCHEMA, (unsigned long long)s->seed, frac);
	util_buf_printf(&b, "  \"tasks\": [%s", s->n ? "\n" : "");
	for (int i = 0; i < s->n; i++)
		util_buf_printf(&b,
				"    {\"name\": \"%s\", \"tier\": \"%s\", \"split\": \"%s\"}%s\n",
				ents[i].name, ents[i].tier, bank_split_name(ents[i].split),
				i + 1 < s->n ? "," : "");
	util_buf_printf(&b, "%s]\n}\n", s->n ? "  " : "");
	char *path = split_path(bank_dir);
	int rc = util_write_file(path, b.s, b.len, e);
	free(path);
	util_buf_free(&b);
	free(ents);
	return rc;
}

enum bank_split_kind bank_split_of(const struct bank_split *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->tasks[i].name, name))
			return s->tasks[i].split;
	return BANK_SPLIT_NONE;
}

/* Names and tiers of every task of the bank (loaded with task_load). */
static int bank_entries(const char *bank_dir, struct bank_split_entry **out, int *n,
			struct ka_err *e)
{
	struct bank_list l = {0};
	if (bank_scan(bank_dir, &l, e))
		return -1;
	struct bank_split_entry *ents = xcalloc((size_t)(l.n ? l.n : 1), sizeof *ents);
	int rc = 0;
	for (int i = 0; i < l.n && rc == 0; i++) {
		struct ka_task *t = task_load(l.dirs[i], e);
		if (!t) {
			rc = -1;
			break;
		}
		snprintf(ents[i].name, sizeof ents[i].name, "%s", t->name);
		snprintf(ents[i].tier, sizeof ents[i].tier, "%s", t->tier);
		ents[i].split = BANK_SPLIT_NONE;
		for (int j = 0; j < i; j++)
			if (!strcmp(ents[j].name, t->name))
				rc = ka_err_set(e, "%s: task name '%s' is used twice in %s",
						l.dirs[i], t->name, bank_dir);
		task_free(t);
	}
	if (rc == 0) {
		*out = ents;
		*n = l.n;
	} else {
		free(ents);
	}
	bank_list_free(&l);
	return rc;
}

int bank_split_update(const char *bank_dir, uint64_t seed, int have_seed, double train_frac,
		      int have_frac, struct bank_split *s, int *n_new, int *n_gone,
		      struct ka_err *e)
{
	struct bank_split old = {0};
	struct bank_split_entry *ents = NULL;
	int n = 0, fresh = 0, gone = 0;
	int r = bank_split_read(bank_dir, &old, e);
	if (r < 0)
		return -1;
	if (r == 1) {
		old.seed = seed;
		old.train_frac = train_frac;
	} else if ((have_seed && seed != old.seed) || (have_frac && train_frac != old.train_frac)) {
		ka_err_set(e,
			   "%s/%s: recorded with seed %llu and train fraction %g; a different one "
			   "would move tasks (remove the file to reassign)",
			   bank_dir, BANK_SPLIT_FILE, (unsigned long long)old.seed, old.train_frac);
		bank_split_free(&old);
		return -1;
	}
	if (bank_entries(bank_dir, &ents, &n, e)) {
		bank_split_free(&old);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		ents[i].split = bank_split_of(&old, ents[i].name);
		fresh += ents[i].split == BANK_SPLIT_NONE;
	}
	for (int i = 0; i < old.n; i++) {
		int found = 0;
		for (int j = 0; j < n && !found; j++)
			found = !strcmp(ents[j].name, old.tasks[i].name);
		gone += !found;
	}
	bank_split_assign(ents, n, old.seed, old.train_frac);
	if (n > 1)
		qsort(ents, (size_t)n, sizeof *ents, cmp_entry);
	struct bank_split out = {old.seed, old.train_frac, n, ents};
	bank_split_free(&old);
	if (bank_split_write(bank_dir, &out, e)) {
		bank_split_free(&out);
		return -1;
	}
	*s = out;
	if (n_new)
		*n_new = fresh;
	if (n_gone)
		*n_gone = gone;
	return 0;
}

int bank_split_filter(const char *bank_dir, const char *split, struct bank_list *l,
		      struct ka_err *e)
{
	enum bank_split_kind want;
	if (!strcmp(split, "all"))
		return 0;
	else if (!strcmp(split, "train"))
		want = BANK_SPLIT_TRAIN;
	else if (!strcmp(split, "dev"))
		want = BANK_SPLIT_DEV;
	else
		return ka_err_set(e, "unknown split '%.32s' (train, dev or all)", split);
	struct bank_split s = {0};
	int r = bank_split_read(bank_dir, &s, e);
	if (r == 1)
		return ka_err_set(e, "%s: no %s (run 'ka bank split --bank %s')", bank_dir,
				  BANK_SPLIT_FILE, bank_dir);
	if (r < 0)
		return -1;
	int k = 0, rc = 0;
	for (int i = 0; i < l->n; i++) {
		struct ka_task *t = rc ? NULL : task_load(l->dirs[i], e);
		if (!t) {
			rc = -1;
			free(l->dirs[i]);
			continue;
		}
		enum bank_split_kind got = bank_split_of(&s, t->name);
		if (got == BANK_SPLIT_NONE)
			rc = ka_err_set(e,
					"%s: task '%s' has no split in %s/%s (run 'ka bank split')",
					l->dirs[i], t->name, bank_dir, BANK_SPLIT_FILE);
		task_free(t);
		if (rc == 0 && got == want)
			l->dirs[k++] = l->dirs[i];
		else
			free(l->dirs[i]);
	}
	l->n = k;
	bank_split_free(&s);
	return rc;
}

int bank_split_tasks(const char *bank_dir, const char *split, struct bank_list *out,
		     struct ka_err *e)
{
	if (bank_scan(bank_dir, out, e))
		return -1;
	if (bank_split_filter(bank_dir, split, out, e)) {
		bank_list_free(out);
		return -1;
	}
	return 0;
}
