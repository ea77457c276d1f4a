/* procrun.c: the run context the procedure and controls tracks share (see
 * procrun.h): loading and splitting the tasks, the model, the grade session,
 * the output folder, and one procedure solve as a journaled unit. */
#include "procrun.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bank.h"
#include "prompt.h"
#include "scorecard.h"

#define PROC_VERSION "0.1.0"

void procedure_opts_default(struct procedure_opts *o)
{
	memset(o, 0, sizeof *o);
	o->train_pct = 50;
	o->target = "auto";
	o->out = "out";
	o->mode = "strategies";
	o->rounds = 5;
	o->budget = 4;
	o->temperature = 0.7;
	o->max_tokens = 8192;
	o->lua_wall_s = 600;
	o->lua_instructions = 200000000ull;
	o->lua_memory = (size_t)64 << 20;
	grade_protocol_default(&o->proto);
}

void procrun_fail(const struct procrun *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "ka --track %s: ", r->label);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Add bank's tasks (of the tier) whose split is want (-1: all) to s. */
static int load_bank(struct procrun *r, const char *bank, int want, struct procrun_split *s,
		     const char *tmpl, struct ka_err *e)
{
	struct bank_list list = {0};
	if (bank_scan(bank, &list, e))
		return -1;
	int rc = -1;
	s->t = xrealloc(s->t, (size_t)(s->n + list.n + 1) * sizeof *s->t);
	s->prompts = xrealloc(s->prompts, (size_t)(s->n + list.n + 1) * sizeof *s->prompts);
	struct ka_task **all = xcalloc((size_t)list.n + 1, sizeof *all);
	const char **names = xcalloc((size_t)list.n + 1, sizeof *names);
	int *is_train = xcalloc((size_t)list.n + 1, sizeof *is_train);
	int n = 0;
	for (int i = 0; i < list.n; i++) {
		struct ka_task *t = task_load(list.dirs[i], e);
		if (!t)
			goto out;
		bank_trust(t); /* the operator's bank, unless a model wrote the task */
		if (r->o->tier && strcmp(t->tier, r->o->tier)) {
			task_free(t);
			continue;
		}
		all[n] = t;
		names[n++] = t->name;
	}
	round_split(names, n, r->o->train_pct, is_train);
	for (int i = 0; i < n; i++) {
		if (want >= 0 && is_train[i] != want)
			continue;
		struct ka_err pe;
		char *p = prompt_render(tmpl, all[i], r->target, &pe);
		if (!p) {
			ka_err_set(e, "%s: %s", prompt_default_template(), pe.msg);
			goto out;
		}
		s->t[s->n] = all[i];
		s->prompts[s->n++] = p;
		all[i] = NULL;
	}
	rc = 0;
out:
	for (int i = 0; i < n; i++)
		task_free(all[i]);
	free(all);
	free(names);
	free(is_train);
	bank_list_free(&list);
	return rc;
}

static int load_tasks(struct procrun *r, struct ka_err *e)
{
	const struct procedure_opts *o = r->o;
	char *tmpl = NULL;
	int rc = -1;
	if (prompt_load_template(prompt_default_template(), &tmpl, e))
		return -1;
	const char *bank = o->train ? o->train : o->bank ? o->bank : bank_default_path();
	r->bank_real = realpath(bank, NULL);
	if (!r->bank_real) {
		ka_err_set(e, "bank '%s': %s", bank, strerror(errno));
		goto out;
	}
	char h1[17];
	int n1 = 0;
	if (bank_content_hash_hex(r->bank_real, h1, &n1, e))
		goto out;
	snprintf(r->bank_hash, sizeof r->bank_hash, "%s", h1);
	r->bank_n = n1;
	if (o->heldout) {
		r->heldout_real = realpath(o->heldout, NULL);
		if (!r->heldout_real) {
			ka_err_set(e, "bank '%s': %s", o->heldout, strerror(errno));
			goto out;
		}
		char h2[17];
		int n2 = 0;
		if (bank_content_hash_hex(r->heldout_real, h2, &n2, e))
			goto out;
		char both[40];
		snprintf(both, sizeof both, "%s%s", h1, h2);
		snprintf(r->bank_hash, sizeof r->bank_hash, "%016llx",
			 (unsigned long long)util_hash64(both, strlen(both), 0));
		r->bank_n = n1 + n2;
		if (load_bank(r, r->bank_real, -1, &r->train, tmpl, e) ||
		    load_bank(r, r->heldout_real, -1, &r->heldout, tmpl, e))
			goto out;
	} else if (load_bank(r, r->bank_real, 1, &r->train, tmpl, e) ||
		   load_bank(r, r->bank_real, 0, &r->heldout, tmpl, e)) {
		goto out;
	}
	if (r->heldout.n == 0) {
		ka_err_set(e, "no held-out %s task (bank %s)", o->tier ? o->tier : "",
			   r->heldout_real ? r->heldout_real : r->bank_real);
		goto out;
	}
	if (r->train.n == 0) {
		ka_err_set(e, "no train %s task (bank %s)", o->tier ? o->tier : "", r->bank_real);
		goto out;
	}
	const char **tn = xcalloc((size_t)r->train.n, sizeof *tn);
	const char **hn = xcalloc((size_t)r->heldout.n, sizeof *hn);
	for (int i = 0; i < r->train.n; i++)
		tn[i] = r->train.t[i]->name;
	for (int i = 0; i < r->heldout.n; i++)
		hn[i] = r->heldout.t[i]->name;
	rc = round_check_disjoint(tn, r->train.n, hn, r->heldout.n, e);
	free(tn);
	free(hn);
out:
	free(tmpl);
	return rc;
}

int procrun_prepare(struct procrun *r, const struct procedure_opts *o, const char *label)
{
	memset(r, 0, sizeof *r);
	r->o = o;
	r->label = label;
	r->d.lock_fd = -1;
	r->target = track_resolve_target(o->target);
	r->per_solve.requests = o->budget;
	r->per_solve.checks = o->budget;
	r->per_solve.tokens = (int64_t)o->budget * o->max_tokens;
	struct ka_err e;
	if (load_tasks(r, &e)) {
		procrun_fail(r, "%s", e.msg);
		return -1;
	}
	struct model_params mp;
	model_params_default(&mp);
	mp.temperature = o->temperature;
	mp.max_tokens = o->max_tokens;
	mp.seed = o->seed;
	mp.concurrency = 1;
	mp.prices_file = o->prices;
	mp.verbose = o->verbose;
	r->m = model_open(o->model, &mp, &e);
	if (!r->m) {
		procrun_fail(r, "%s", e.msg);
		return -1;
	}
	return 0;
}

json_t *procrun_identity(const struct procrun *r)
{
	const struct procedure_opts *o = r->o;
	json_t *a = json_object();
	json_object_set_new(a, "track", json_string(r->label));
	json_object_set_new(a, "model", json_string(o->model));
	json_object_set_new(a, "bank", json_string(r->bank_real));
	if (r->heldout_real)
		json_object_set_new(a, "heldout", json_string(r->heldout_real));
	json_object_set_new(a, "bank_hash", json_string(r->bank_hash));
	json_object_set_new(a, "train_pct", json_integer(o->train_pct));
	json_object_set_new(a, "tier", json_string(o->tier ? o->tier : "all"));
	json_object_set_new(a, "target", json_string(r->target));
	json_object_set_new(a, "budget", json_integer(o->budget));
	json_object_set_new(a, "seed", json_integer(o->seed));
	json_object_set_new(a, "temperature", json_real(o->temperature));
	json_object_set_new(a, "max_tokens", json_integer(o->max_tokens));
	json_object_set_new(a, "protocol", grade_protocol_json(&o->proto));
	return a;
}

static void rm_run_dirs(const char *out)
{
	static const char *const dirs[] = {"procedures", "logs", "archive", NULL};
	for (int i = 0; dirs[i]; i++) {
		char *p = xasprintf("%s/%s", out, dirs[i]);
		util_rmtree(p);
		free(p);
	}
}

int procrun_open(struct procrun *r, json_t *args)
{
	const struct procedure_opts *o = r->o;
	struct ka_err e;
	char *key = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
	char *pretty = json_dumps(args, JSON_INDENT(2) | JSON_SORT_KEYS);
	int rc = rundir_open(&r->d, o->out, o->fresh, key, pretty, r->bank_hash, &e);
	free(key);
	free(pretty);
	if (rc) {
		procrun_fail(r, "%s", e.msg);
		return rc;
	}
	if (o->fresh)
		rm_run_dirs(o->out);
	char *work = xasprintf("%s/.grade", o->out);
	r->gs = grade_session_open(r->target, o->platform, o->gpu, &o->proto, work, &e);
	free(work);
	if (!r->gs) {
		procrun_fail(r, "cannot start the %s grader: %s", r->target, e.msg);
		return KA_EXIT_FAIL;
	}
	char *dev = json_dumps(grade_session_device(r->gs), JSON_COMPACT);
	rc = journal_start(r->d.j, dev ? dev : "{}", &r->start_id, &e);
	free(dev);
	if (rc) {
		procrun_fail(r, "%s", e.msg);
		return KA_EXIT_FAIL;
	}
	return 0;
}

static void split_free(struct procrun_split *s)
{
	for (int i = 0; i < s->n; i++) {
		task_free(s->t[i]);
		free(s->prompts[i]);
	}
	free(s->t);
	free(s->prompts);
}

void procrun_free(struct procrun *r)
{
	grade_session_close(r->gs);
	rundir_close(&r->d);
	model_close(r->m);
	split_free(&r->train);
	split_free(&r->heldout);
	free(r->bank_real);
	free(r->heldout_real);
}

/* ---- one unit -------------------------------------------------------------- */

struct unit_host {
	struct procrun *r;
	const char *key;
	int salt;
	const struct ka_task *t;
};

static int host_generate(void *ctx, int idx, const char *prompt, char **text, int64_t *tokens,
			 int *fatal, char *why, size_t cap)
{
	struct unit_host *u = ctx;
	struct journal_reply rep;
	struct ka_err e;
	int sent = 0;
	if (round_generate(u->r->d.j, u->r->m, u->key, u->salt + idx, prompt,
			   prompt_extract_lang(u->r->target), &rep, &sent, &e)) {
		*fatal = 1;
		snprintf(why, cap, "%s", e.msg);
		return -1;
	}
	u->r->sent += sent;
	*tokens = rep.in_tokens + rep.out_tokens;
	int rc = 0;
	if (!rep.ok) {
		snprintf(why, cap, "request failed: %s", rep.error ? rep.error : "?");
		rc = -1;
	} else {
		*text = xasprintf("%s", rep.text ? rep.text : "");
	}
	journal_reply_free(&rep);
	return rc;
}

static int host_check(void *ctx, int idx, const char *code, struct round_grade *g, char *why,
		      size_t cap)
{
	(void)idx;
	struct unit_host *u = ctx;
	struct ka_err e;
	int fresh;
	if (round_grade_code(u->r->d.j, u->r->gs, u->r->start_id, u->t, code, g, &fresh, &e)) {
		snprintf(why, cap, "the grader failed: %s", e.msg);
		return -1;
	}
	return 0;
}

static const char *status_name(enum luabox_status s)
{
	static const char *const n[] = {"ok", "error", "instructions", "memory", "timeout"};
	return (unsigned)s < 5 ? n[s] : "?";
}

static void write_log(const struct procrun *r, const char *key, const struct procedure_outcome *po)
{
	char *name = xasprintf("%s", key);
	for (char *c = name; *c; c++)
		if (*c == '/')
			*c = '_';
	char *dir = xasprintf("%s/logs", r->o->out);
	char *path = xasprintf("%s/%s.log", dir, name);
	struct ka_err e;
	struct util_buf b = {0};
	util_buf_printf(&b, "unit %s: status %s%s%s\n", key, status_name(po->status),
			po->why[0] ? ": " : "", po->why);
	util_buf_puts(&b, po->log ? po->log : "");
	if (!util_mkdirs(dir, &e))
		util_write_file(path, b.s ? b.s : "", b.len, &e);
	util_buf_free(&b);
	free(name);
	free(dir);
	free(path);
}

int procrun_unit(struct procrun *r, const char *key, int salt, const struct procedure *p,
		 const struct procrun_split *s, int i, const struct procedure_archive_entry *a,
		 int n_a, int grade, json_t **out, struct ka_err *e)
{
	int got = round_unit_get(r->d.j, key, out, e);
	if (got <= 0)
		return got;
	const struct procedure_opts *o = r->o;
	struct unit_host u = {.r = r, .key = key, .salt = salt, .t = s->t[i]};
	struct procedure_host h = {.generate = host_generate, .check = host_check, .ctx = &u};
	struct procedure_env env = {
		.task = s->t[i],
		.task_prompt = s->prompts[i],
		.target = r->target,
		.archive = a,
		.n_archive = n_a,
		.allow = r->per_solve,
		.box = {.instructions = o->lua_instructions,
			.memory = o->lua_memory,
			.wall_s = o->lua_wall_s},
		.seed = (uint64_t)o->seed * 1000003u + (uint64_t)salt +
			util_hash64(key, strlen(key), 0),
	};
	struct procedure_outcome po;
	if (procedure_solve(p, &h, &env, &po)) {
		ka_err_set(e, "%s", po.why);
		procedure_outcome_free(&po);
		return -1;
	}
	write_log(r, key, &po);
	json_t *oc =
		json_pack("{s:s,s:s,s:s,s:b,s:I,s:I,s:I}", "task", s->t[i]->name, "status",
			  status_name(po.status), "why", po.why, "submitted", po.submitted != NULL,
			  "requests", (json_int_t)po.used.requests, "checks",
			  (json_int_t)po.used.checks, "tokens", (json_int_t)po.used.tokens);
	if (grade) {
		struct round_grade g;
		int fresh;
		if (round_grade_code(r->d.j, r->gs, r->start_id, s->t[i], po.submitted, &g, &fresh,
				     e)) {
			json_decref(oc);
			procedure_outcome_free(&po);
			return -1;
		}
		char *det = procedure_redact(g.detail ? g.detail : "");
		if (strlen(det) > 600)
			det[600] = 0;
		json_object_set_new(oc, "verdict", json_string(g.verdict));
		json_object_set_new(oc, "ok", json_boolean(g.ok));
		json_object_set_new(oc, "score", json_real(g.score));
		json_object_set_new(oc, "phase", json_string(g.phase));
		json_object_set_new(oc, "detail", json_string(det));
		if (g.eager.present)
			json_object_set_new(oc, "speedup_eager", json_real(g.eager.median));
		free(det);
		round_grade_free(&g);
	}
	if (po.submitted)
		json_object_set_new(oc, "code", json_string(po.submitted));
	procedure_outcome_free(&po);
	if (round_unit_put(r->d.j, key, oc, e)) {
		json_decref(oc);
		return -1;
	}
	*out = oc;
	return 0;
}

void procrun_used(const json_t *oc, struct round_budget *b)
{
	b->requests = json_integer_value(json_object_get(oc, "requests"));
	b->checks = json_integer_value(json_object_get(oc, "checks"));
	b->tokens = json_integer_value(json_object_get(oc, "tokens"));
}

/* ---- scorecards -------------------------------------------------------------- */

const char *procrun_model_name(const char *spec, char *buf, size_t cap)
{
	const char *colon = strchr(spec, ':');
	if (!colon) {
		snprintf(buf, cap, "%s", spec);
		return buf;
	}
	size_t be = (size_t)(colon - spec);
	int api = (be == 6 && !strncmp(spec, "openai", 6)) ||
		  (be == 9 && !strncmp(spec, "anthropic", 9)) ||
		  (be == 7 && !strncmp(spec, "bedrock", 7));
	if (!api) {
		snprintf(buf, cap, "%s", spec);
		return buf;
	}
	const char *name = colon + 1, *at = strchr(name, '@');
	size_t n = at ? (size_t)(at - name) : strlen(name);
	snprintf(buf, cap, "%.*s", (int)n, name);
	return buf;
}

static const char *model_kind(const struct procrun *r)
{
	if (r->o->model_kind)
		return r->o->model_kind;
	const char *be = model_backend_name(r->m);
	if (!strcmp(be, "anthropic") || !strcmp(be, "bedrock"))
		return "closed";
	if (!strcmp(be, "openai"))
		return strchr(r->o->model, '@') ? "open" : "closed";
	return "open";
}

static json_t *str_of(const json_t *d, const char *const *keys, const char *dflt)
{
	for (int i = 0; keys[i]; i++) {
		const char *s = json_string_value(json_object_get(d, keys[i]));
		if (s && *s)
			return json_string(s);
	}
	return json_string(dflt);
}

static json_t *device_json(const struct procrun *r)
{
	const json_t *d = grade_session_device(r->gs);
	static const char *const name_k[] = {"name", NULL};
	static const char *const driver_k[] = {"driver", "driver_version", NULL};
	static const char *const runtime_k[] = {"runtime",	    "cuda_runtime", "cuda_version",
						"platform_version", "version",	    NULL};
	json_t *extra = json_is_object(d) ? json_deep_copy(d) : json_object();
	return json_pack("{s:o,s:o,s:o,s:b,s:{s:n,s:n,s:n},s:o}", "name",
			 str_of(d, name_k, "unknown"), "driver", str_of(d, driver_k, "unknown"),
			 "runtime", str_of(d, runtime_k, "unknown"), "test_grade",
			 json_is_true(json_object_get(d, "test_grade")), "clocks", "sm_mhz_min",
			 "sm_mhz_max", "mem_mhz", "extra", extra);
}

json_t *procrun_scorecard_base(const struct procrun *r, const char *track)
{
	const struct procedure_opts *o = r->o;
	char created[32], mname[256];
	util_iso_now(created, sizeof created);
	json_t *sc = json_object();
	json_object_set_new(sc, "schema", json_string(SCORECARD_SCHEMA));
	json_object_set_new(sc, "track", json_string(track));
	json_object_set_new(sc, "created", json_string(created));
	json_object_set_new(sc, "ka_version", json_string(PROC_VERSION));
	json_object_set_new(sc, "model",
			    json_pack("{s:s,s:s,s:s,s:s}", "spec", o->model, "backend",
				      model_backend_name(r->m), "name",
				      procrun_model_name(o->model, mname, sizeof mname), "kind",
				      model_kind(r)));
	const char *slash = strrchr(r->bank_real, '/');
	json_object_set_new(sc, "bank",
			    json_pack("{s:s,s:s,s:s,s:s,s:i}", "name",
				      slash && slash[1] ? slash + 1 : r->bank_real, "path",
				      r->bank_real, "hash", r->bank_hash, "split",
				      r->heldout_real ? "heldout" : "public", "n_tasks",
				      r->bank_n));
	json_object_set_new(sc, "k", json_integer(1));
	json_object_set_new(sc, "seed", json_integer(o->seed));
	json_object_set_new(sc, "target", json_string(r->target));
	json_object_set_new(sc, "device", device_json(r));
	json_t *p = grade_protocol_json(&o->proto);
	if (!json_object_get(p, "flush_bytes"))
		json_object_set_new(p, "flush_bytes", json_integer((json_int_t)256 << 20));
	if (!json_object_get(p, "warmup"))
		json_object_set_new(p, "warmup", json_integer(4));
	json_object_set_new(sc, "protocol", p);
	return sc;
}

int procrun_write_scorecard(const struct procrun *r, const json_t *sc, char **path)
{
	struct ka_err e;
	char *text = json_dumps(sc, JSON_INDENT(2));
	*path = xasprintf("%s/scorecard.json", r->o->out);
	int rc = text ? util_write_file(*path, text, strlen(text), &e) : -1;
	if (rc)
		procrun_fail(r, "%s", text ? e.msg : "cannot encode the scorecard");
	free(text);
	return rc;
}
