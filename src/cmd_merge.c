/* cmd_merge.c: `ka merge OUT` (or `ka merge OUT/shard-*`): the shards of a
 * sharded run (shard.h) back into the run one machine would have made. The
 * shards' journals are merged into OUT/journal.sqlite, recorded as the run
 * `ka --track capability` with the same options and --out OUT would record
 * (that command then finds every sample graded), and OUT/scorecard.json,
 * results.jsonl and kernels/ are written from the merged journal with the
 * tracks' own collector (sampler_collect) and aggregates. Model, target,
 * device and protocol come from shard 0's scorecard; every shard must agree
 * on them. Grades nothing. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bank.h"
#include "cli.h"
#include "journal.h"
#include "journal_merge.h"
#include "sampler.h"
#include "scorecard.h"
#include "shard.h"
#include "task.h"
#include "util.h"

#define CMD "merge"

static void usage(FILE *f)
{
	fputs("usage: ka merge OUT | OUT/shard-*\n\n"
	      "Merges the shards of a ka slurm run (OUT/slurm.json) into one run in OUT:\n"
	      "the shards' journals into OUT/journal.sqlite (the journal of the same run on\n"
	      "one machine), then OUT/scorecard.json, results.jsonl and kernels/. Every\n"
	      "shard must be complete; their model, target, k, seed and options must agree.\n"
	      "Running it again rebuilds the same files.\n\n"
	      "exit codes: 0 merged, 1 a shard is incomplete or a write failed, 2 bad usage\n"
	      "or input.\n",
	      f);
}

/* The folder of the plan: OUT itself, or the parent of OUT/shard-i
 * arguments (all the same). Caller frees; NULL with e. */
static char *plan_folder(int n, char **args, struct ka_err *e)
{
	char *out = NULL;
	for (int i = 0; i < n; i++) {
		char *p = xstrdup(args[i]);
		size_t len = strlen(p);
		while (len > 1 && p[len - 1] == '/')
			p[--len] = 0;
		char *slash = strrchr(p, '/');
		const char *base = slash ? slash + 1 : p;
		char *dir;
		if (!strncmp(base, "shard-", 6)) {
			if (slash)
				*slash = 0;
			dir = slash ? p : xstrdup(".");
			if (!slash)
				free(p);
		} else {
			dir = p;
		}
		char *real = realpath(dir, NULL);
		free(dir);
		if (!real) {
			ka_err_set(e, "%s: %s", args[i], strerror(errno));
			free(out);
			return NULL;
		}
		if (out && strcmp(out, real)) {
			ka_err_set(e, "%s is not a shard of %s", args[i], out);
			free(real);
			free(out);
			return NULL;
		}
		free(out);
		out = real;
	}
	return out;
}

/* The run's identity, from shard 0's: the whole bank instead of the shard's. */
static char *merged_args(const char *shard_key, const char *bank, const char *bank_hash, int pretty)
{
	json_t *a = json_loads(shard_key, 0, NULL);
	if (!a)
		return NULL;
	json_object_set_new(a, "bank", json_string(bank));
	json_object_set_new(a, "bank_hash", json_string(bank_hash));
	char *s = json_dumps(a, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_SORT_KEYS);
	json_decref(a);
	return s;
}

/* Everything a merge holds. */
struct merge {
	json_t *plan, *base; /* the plan, shard 0's scorecard */
	const char *out, *bank;
	char bank_hash[17];
	int bank_n, n_shards, n_tasks;
	struct sampler_task *tasks;
	struct journal *j;
	char *key0;
};

/* Each shard's journal: same run apart from the bank; merged into m->j.
 * 0 or -1 with e. */
static int merge_journals(struct merge *m, struct ka_err *e)
{
	char *jpath = xasprintf("%s/journal.sqlite", m->out);
	int rc = -1;
	for (const char *ext = ""; ext; ext = !*ext		     ? "-wal"
					      : !strcmp(ext, "-wal") ? "-shm"
								     : NULL) {
		char *p = xasprintf("%s%s", jpath, ext);
		unlink(p);
		free(p);
	}
	m->j = journal_open(jpath, e);
	if (!m->j)
		goto out;
	for (int s = 0; s < m->n_shards; s++) {
		char *dir = shard_dir(m->plan, s), *sj = xasprintf("%s/journal.sqlite", dir);
		char *key = NULL;
		struct journal *shard = journal_open(sj, e);
		int ok = shard && journal_run_get(shard, &key, NULL, e) == 0;
		if (shard && !ok && !e->msg[0])
			ka_err_set(e, "%s: no run recorded", sj);
		journal_close(shard);
		if (ok) {
			/* every shard is the same run but for its bank */
			char *a = merged_args(key, m->bank, m->bank_hash, 0);
			char *b = m->key0 ? merged_args(m->key0, m->bank, m->bank_hash, 0) : NULL;
			if (!a || (b && strcmp(a, b))) {
				ka_err_set(e, "%s: another run than shard-0 (its options differ)",
					   dir);
				ok = 0;
			}
			if (!m->key0)
				m->key0 = xstrdup(key);
			free(a);
			free(b);
		}
		if (ok && journal_merge_from(m->j, sj, e))
			ok = 0;
		free(key);
		free(sj);
		free(dir);
		if (!ok)
			goto out;
	}
	char *key = merged_args(m->key0, m->bank, m->bank_hash, 0);
	char *pretty = merged_args(m->key0, m->bank, m->bank_hash, 1);
	rc = journal_run_set(m->j, key, pretty, m->bank_hash, e);
	free(key);
	free(pretty);
out:
	free(jpath);
	return rc;
}

/* The tasks of the whole run, in the order the unsharded track takes them. */
static int load_tasks(struct merge *m, struct ka_err *e)
{
	const json_t *tier = json_object_get(m->plan, "tier");
	struct bank_list l = {0};
	if (bank_content_hash_hex(m->bank, m->bank_hash, &m->bank_n, e) ||
	    shard_list_tasks(m->bank, json_string_value(tier), &l, e))
		return -1;
	m->tasks = xcalloc((size_t)(l.n ? l.n : 1), sizeof *m->tasks);
	int rc = 0;
	for (int i = 0; i < l.n && !rc; i++) {
		m->tasks[i].t = task_load(l.dirs[i], e);
		if (!m->tasks[i].t)
			rc = -1;
		else
			m->n_tasks++;
	}
	bank_list_free(&l);
	return rc;
}

/* Shard 0's scorecard, checked against the others' model, target, k,
 * seed and protocol. 0 or -1 with e. */
static int load_base(struct merge *m, struct ka_err *e)
{
	static const char *const same[] = {"track", "model", "k", "seed", "target", NULL};
	json_t *devices = json_array();
	int rc = 0;
	for (int s = 0; s < m->n_shards && !rc; s++) {
		char *dir = shard_dir(m->plan, s), *p = xasprintf("%s/scorecard.json", dir);
		json_t *sc = scorecard_load(p, e);
		if (!sc) {
			rc = -1;
		} else if (!m->base) {
			m->base = json_incref(sc);
		} else {
			for (int i = 0; same[i] && !rc; i++)
				if (!json_equal(json_object_get(sc, same[i]),
						json_object_get(m->base, same[i])))
					rc = ka_err_set(e, "%s: %s differs from shard-0's", p,
							same[i]);
		}
		if (sc)
			json_array_append_new(devices,
					      json_deep_copy(json_object_get(sc, "device")));
		json_decref(sc);
		free(p);
		free(dir);
	}
	if (!rc && m->n_shards > 1) {
		json_t *dev = json_object_get(m->base, "device");
		if (!json_is_object(json_object_get(dev, "extra")))
			json_object_set_new(dev, "extra", json_object());
		json_object_set(json_object_get(dev, "extra"), "shards", devices);
	}
	json_decref(devices);
	return rc;
}

/* OUT/scorecard.json and results.jsonl from the merged journal. Returns
 * an exit code (reported). */
static int write_outputs(struct merge *m)
{
	const char *target = json_string_value(json_object_get(m->base, "target"));
	int k = (int)json_integer_value(json_object_get(m->base, "k"));
	struct sampler_opts so = {.label = "merge", .out = m->out, .target = target, .k = k};
	struct sampler_outputs outp;
	struct ka_err e;
	char *text = NULL, *sc_path = xasprintf("%s/scorecard.json", m->out);
	char *jl_path = xasprintf("%s/results.jsonl", m->out);
	int rc = KA_EXIT_FAIL;
	if (sampler_collect(m->j, m->tasks, m->n_tasks, &so, &outp, &e)) {
		cli_fail(CMD, "%s", e.msg);
		goto out;
	}
	int total = m->n_tasks * k;
	if (outp.n_samples != total) {
		cli_fail(CMD,
			 "%d of %d samples are not graded: run the unfinished shards again "
			 "(ka slurm with the same options)",
			 total - outp.n_samples, total);
		goto out;
	}
	json_t *sc = m->base;
	char created[32];
	util_iso_now(created, sizeof created);
	const char *slash = strrchr(m->bank, '/');
	json_object_set_new(sc, "created", json_string(created));
	json_t *bank = json_object_get(sc, "bank");
	json_object_set_new(bank, "name", json_string(slash && slash[1] ? slash + 1 : m->bank));
	json_object_set_new(bank, "path", json_string(m->bank));
	json_object_set_new(bank, "hash", json_string(m->bank_hash));
	json_object_set_new(bank, "n_tasks", json_integer(m->bank_n));
	json_object_set(sc, "tasks", outp.tasks);
	json_object_set_new(sc, "aggregates",
			    scorecard_aggregates_json(outp.m.tasks, outp.m.n_tasks, k));
	if (scorecard_validate(sc, sc_path, &e) || scorecard_recompute(sc, sc_path, &e)) {
		cli_fail(CMD, "the merged scorecard does not check: %s", e.msg);
		goto out;
	}
	text = json_dumps(sc, JSON_INDENT(2));
	if (!text || util_write_file(sc_path, text, strlen(text), &e) ||
	    util_write_file(jl_path, outp.jsonl.s, outp.jsonl.len, &e)) {
		cli_fail(CMD, "%s", text ? e.msg : "cannot encode the scorecard");
		goto out;
	}
	printf("scorecard: %s (%d shards, %d tasks, %d samples, %d ok)\n", sc_path, m->n_shards,
	       m->n_tasks, outp.n_samples, outp.n_ok);
	rc = KA_EXIT_OK;
out:
	sampler_outputs_free(&outp);
	free(text);
	free(sc_path);
	free(jl_path);
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return KA_EXIT_OK;
	}
	if (argc < 2)
		return cli_usage_error(CMD, "OUT (or OUT/shard-*) is needed");
	struct merge m;
	memset(&m, 0, sizeof m);
	struct ka_err e = {0};
	int rc = KA_EXIT_USAGE;
	char *out = plan_folder(argc - 1, argv + 1, &e);
	if (!out || shard_plan_load(out, &m.plan, &e)) {
		cli_bad_input(CMD, "%s", e.msg);
		goto out;
	}
	m.out = out;
	m.bank = json_string_value(json_object_get(m.plan, "bank"));
	m.n_shards = (int)json_array_size(json_object_get(m.plan, "shards"));
	if (load_tasks(&m, &e) || load_base(&m, &e)) {
		cli_bad_input(CMD, "%s", e.msg);
		goto out;
	}
	e.msg[0] = 0;
	if (merge_journals(&m, &e)) {
		rc = cli_fail(CMD, "%s", e.msg);
		goto out;
	}
	rc = write_outputs(&m);
out:
	journal_close(m.j);
	for (int i = 0; i < m.n_tasks; i++)
		task_free(m.tasks[i].t);
	free(m.tasks);
	free(m.key0);
	json_decref(m.base);
	json_decref(m.plan);
	free(out);
	return rc;
}
