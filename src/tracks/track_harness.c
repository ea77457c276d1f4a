/* track_harness.c: track 4, harness RSI (docs/harness.md). A researcher
 * model with fixed weights rewrites the training harness (harness.lua, run
 * in the Lua sandbox: harness.h) of an open trainee each round. Two arms,
 * the same trainee, engine, seeds, data budget and generation budget:
 *
 *   improved  round r trains with the harness the researcher wrote before
 *             round r, from the evidence of rounds < r (train split only);
 *   frozen    every round trains with round 0's harness.
 *
 * Round 0: the base trainee samples k replies per held-out task (C0, one
 * evaluation both arms share) and k per train task; the verified ones start
 * both arms' pools. Round r = 1..R, for each arm: the harness turns the
 * arm's pool into an SFT set and hyperparameters (checked against the
 * bounds), the engine trains the base on it (ReST-EM: from the base every
 * round), and the trained model samples k replies per held-out task (C of
 * the arm at r) and per train task (its verified ones join the arm's pool).
 * An edit that does not parse, load, stay in the caps or give an output in
 * bounds on this round's pool is rejected with its reason, and the round
 * trains with the previous harness (fallback); a harness that fails at run
 * time falls back to the one before it, down to round 0's; when none works
 * the arm trains on nothing that round. Every engine call, the researcher's
 * reply, the edit decision and each harness run are journaled: the same
 * command continues a killed run. The researcher's side (the evidence, the
 * edit request and its decision) is harness_edit.c. */
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linediff.h"
#include "metrics.h"
#include "prompt.h"
#include "scorecard.h"
#include "track_harness.h"

#define IMP TH_IMP
#define FRZ TH_FRZ
const char *const th_arms[2] = {"improved", "frozen"};

static const char HARNESS_VERDICT_RULE[] =
	"The key difference D is the task-level paired difference of held-out mean C, "
	"improved minus frozen harness at the final round, with a 95% percentile bootstrap "
	"CI over held-out tasks (2000 resamples). 'positive' when the CI of D lies above 0 "
	"and the improved arm's final C is above C0; 'negative' when the CI lies below 0; "
	"otherwise 'no signal'. Fixed before the run.";

void harness_opts_default(struct harness_opts *o)
{
	memset(o, 0, sizeof *o);
	procedure_opts_default(&o->p);
	o->p.max_tokens = 2048;
	o->p.rounds = 3;
	o->p.lua_wall_s = HARNESS_WALL_DEFAULT;
	o->p.lua_memory = HARNESS_MEMORY_DEFAULT;
	o->engine = "torch";
	o->finetune = "auto";
	o->prompt_style = "solver";
	o->k = 3;
	o->rounds = 3;
	o->max_examples = 256;
	o->epochs = 2;
	o->batch = 8;
	o->lora_r = 16;
	o->lr = 1e-4;
	o->engine_timeout_s = 86400;
}

void th_say(const struct htrack *t, const char *fmt, ...)
{
	if (t->o->p.quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("ka: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- pools and contexts ------------------------------------------------------- */

/* Append the verified entries of ver to pool, each with its id. */
static void pool_add(json_t *pool, const json_t *ver)
{
	size_t i;
	json_t *x;
	json_array_foreach(ver, i, x)
	{
		json_t *c = json_deep_copy(x);
		json_object_set_new(c, "id", json_integer((json_int_t)json_array_size(pool) + 1));
		json_array_append_new(pool, c);
	}
}

/* Count of pool entries of task (all, and distinct kernels). */
void th_pool_count(const json_t *pool, const char *task, int *n, int *distinct)
{
	json_t *seen = json_object();
	size_t i;
	json_t *x;
	*n = 0;
	json_array_foreach(pool, i, x)
	{
		if (task && strcmp(json_string_value(json_object_get(x, "task")), task))
			continue;
		(*n)++;
		json_object_set(seen, json_string_value(json_object_get(x, "hash")), json_true());
	}
	*distinct = (int)json_object_size(seen);
	json_decref(seen);
}

static json_t *num_or_null(double x)
{
	return isnan(x) || x < 0 ? json_null() : json_real(x);
}

double th_mean(const double *x, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i];
	return n ? s / n : 0;
}

/* ctx.history: this arm's rounds before r. */
static json_t *history_json(const struct htrack *t, int a, int r)
{
	json_t *h = json_array();
	for (int k = 0; k < r; k++) {
		const struct arm_round *x = &t->ar[a][k];
		json_array_append_new(
			h, json_pack("{s:i,s:i,s:s,s:i,s:i,s:o,s:o,s:f,s:O?}", "round", k,
				     "harness", x->version, "status", x->status, "n_examples",
				     x->n_examples, "n_distinct", x->n_distinct, "final_loss",
				     num_or_null(x->loss), "diversity", num_or_null(x->diversity),
				     "train_ok", th_mean(x->tok, t->nt), "hyper", x->hyper));
	}
	return h;
}

/* ctx.tasks: the train tasks with the last round's results of this arm. */
static json_t *tasks_json(const struct htrack *t, int a, int r)
{
	json_t *arr = json_array();
	const struct arm_round *last = &t->ar[a][r - 1];
	for (int i = 0; i < t->nt; i++) {
		const struct ka_task *k = t->r.train.t[i];
		int n, d;
		th_pool_count(t->pool[a], k->name, &n, &d);
		char *p = trainee_prompt(&t->tr, &t->r.train, i);
		json_array_append_new(
			arr, json_pack("{s:s,s:s,s:s,s:s,s:f,s:f,s:i,s:i}", "name", k->name, "tier",
				       k->tier, "description", k->description ? k->description : "",
				       "prompt", p, "last_ok", last->tok[i], "last_score",
				       last->tc[i], "in_pool", n, "distinct_in_pool", d));
		free(p);
	}
	return arr;
}

/* The argument of harness(ctx) for arm a at round r (new reference). */
static json_t *build_ctx(const struct htrack *t, int a, int r)
{
	json_t *ctx = json_pack("{s:i,s:i,s:s,s:s,s:O,s:o,s:o,s:o,s:o}", "round", r, "rounds", t->R,
				"target", t->r.target, "language", prompt_fence_lang(t->r.target),
				"pool", t->pool[a], "tasks", tasks_json(t, a, r), "history",
				history_json(t, a, r), "defaults", harness_hyper_json(&t->defaults),
				"bounds", harness_bounds_json(&t->bounds));
	return ctx;
}

void th_input_of(const struct htrack *t, const json_t *ctx, int r, struct harness_input *in)
{
	memset(in, 0, sizeof *in);
	in->ctx = ctx;
	in->defaults = t->defaults;
	in->bounds = t->bounds;
	in->lang = t->tr.lang;
	in->box = t->box;
	in->seed = (uint64_t)t->o->p.seed * 1000003u + (uint64_t)r;
}

/* ---- the harness files --------------------------------------------------------- */

void th_write_text(const struct htrack *t, const char *name, const char *text)
{
	struct ka_err e;
	char *path = xasprintf("%s/%s", t->dir_h, name);
	if (util_write_file(path, text, strlen(text), &e))
		th_say(t, "%s", e.msg);
	free(path);
}

void th_save_version(struct htrack *t, int r, int *added, int *removed)
{
	char name[64], prev[64];
	snprintf(name, sizeof name, "round-%d.lua", r);
	th_write_text(t, name, t->hv[r]);
	*added = *removed = 0;
	if (r == 0)
		return;
	snprintf(prev, sizeof prev, "round-%d.lua", r - 1);
	char *d = linediff_unified(t->hv[r - 1], t->hv[r], prev, name, added, removed);
	snprintf(name, sizeof name, "round-%d.diff", r);
	th_write_text(t, name, d);
	free(d);
}

/* The Lua log of one harness run in OUT/logs/. */
static void write_log(const struct htrack *t, int a, int r, int version,
		      const struct harness_result *hr)
{
	char *dir = xasprintf("%s/logs", t->o->p.out);
	char *path = xasprintf("%s/r%d_%s_harness-round-%d.log", dir, r, th_arms[a], version);
	struct util_buf b = {0};
	struct ka_err e;
	util_buf_printf(&b, "harness round-%d on %s's pool at round %d: %s%s%s\n", version,
			th_arms[a], r, hr->why[0] ? "rejected: " : "ok", hr->why, "");
	util_buf_puts(&b, hr->log ? hr->log : "");
	if (!util_mkdirs(dir, &e))
		util_write_file(path, b.s ? b.s : "", b.len, &e);
	util_buf_free(&b);
	free(dir);
	free(path);
}

/* ---- choosing the harness run -------------------------------------------------- */

/* Run version v (hv[v]) on ctx for arm a at round r. 0 accepted, -1 not. */
static int run_version(struct htrack *t, int a, int r, int v, const json_t *ctx,
		       struct harness_result *hr)
{
	struct harness_input in;
	th_input_of(t, ctx, r, &in);
	int rc = harness_run(t->hv[v], &in, hr);
	write_log(t, a, r, v, hr);
	return rc;
}

/* The first round whose harness is the same text as round v's (a rejected
 * edit copies the previous version). */
static int origin(const struct htrack *t, int v)
{
	while (v > 0 && !strcmp(t->hv[v - 1], t->hv[v]))
		v--;
	return v;
}

/* The harness run arm a trains with at round r: its own version first
 * (improved: hv[r]; frozen: hv[0]), then each earlier distinct version,
 * down to round 0's. x->version, status and reason say which ran and why;
 * version -1 when none worked (*hr then holds no example). */
static void choose(struct htrack *t, int a, int r, const json_t *ctx, struct harness_result *hr)
{
	struct arm_round *x = &t->ar[a][r];
	int first = a == IMP ? r : 0;
	char why[512] = "";
	memset(hr, 0, sizeof *hr);
	for (int v = first; v >= 0; v--) {
		if (v < first && !strcmp(t->hv[v], t->hv[v + 1]))
			continue;
		harness_result_free(hr);
		if (run_version(t, a, r, v, ctx, hr) == 0) {
			x->version = origin(t, v);
			snprintf(x->status, sizeof x->status, "%s", v == first ? "ok" : "fallback");
			snprintf(x->reason, sizeof x->reason, "%s", why);
			return;
		}
		if (v == first)
			snprintf(why, sizeof why, "round-%d's harness failed: %.400s", v, hr->why);
	}
	x->version = -1;
	snprintf(x->status, sizeof x->status, "failed");
	snprintf(x->reason, sizeof x->reason, "%s", why);
	json_array_clear(hr->examples);
}

/* The figures of a harness run into x (hyper only when a harness ran). */
static void take_result(struct arm_round *x, const struct harness_result *hr)
{
	x->n_examples = (int)json_array_size(hr->examples);
	x->n_selected = hr->n_selected;
	x->n_distinct = hr->n_distinct;
	x->diversity = trainee_diversity(hr->examples);
	json_decref(x->hyper);
	x->hyper = NULL;
	if (x->version >= 0) {
		x->hyper = harness_hyper_json(&hr->hyper);
		json_object_set_new(x->hyper, "order",
				    json_string(hr->hyper.as_given ? "as_given" : "shuffle"));
	}
}

/* The unit's journaled outcome of x and the SFT set's hash h (new reference). */
static json_t *unit_json(const struct arm_round *x, const char *h)
{
	return json_pack("{s:i,s:s,s:s,s:s,s:i,s:i,s:i,s:f,s:O?}", "version", x->version, "status",
			 x->status, "reason", x->reason, "sft_hash", h, "n_examples", x->n_examples,
			 "n_selected", x->n_selected, "n_distinct", x->n_distinct, "diversity",
			 x->diversity, "hyper", x->hyper);
}

/* x as the journaled outcome done says. */
static void unit_restore(struct arm_round *x, const json_t *done)
{
	x->version = (int)json_integer_value(json_object_get(done, "version"));
	snprintf(x->status, sizeof x->status, "%s",
		 json_string_value(json_object_get(done, "status")));
	snprintf(x->reason, sizeof x->reason, "%s",
		 json_string_value(json_object_get(done, "reason")));
	x->n_examples = (int)json_integer_value(json_object_get(done, "n_examples"));
	x->n_selected = (int)json_integer_value(json_object_get(done, "n_selected"));
	x->n_distinct = (int)json_integer_value(json_object_get(done, "n_distinct"));
	x->diversity = json_number_value(json_object_get(done, "diversity"));
	json_decref(x->hyper);
	x->hyper = json_incref(json_object_get(done, "hyper"));
}

/* Write hr's examples as the SFT set at sft and hash it into h. 0 or -1. */
static int write_sft(const char *sft, const struct harness_result *hr, char h[17])
{
	struct ka_err e;
	return trainee_write_sft(sft, hr->examples, &e) || engine_hash_path(sft, h) ? -1 : 0;
}

/* The harness run of arm a at round r: as journaled, when the journal holds
 * it and its SFT set (OUT/data/r<r>_<arm>_sft.jsonl) is on disk as it was
 * (a harness is not re-run: Lua's pairs order is not fixed from one run to
 * the next); the journaled version re-run when the set is gone (it must
 * give the same set); else chosen now (choose), written and journaled. x is
 * filled. 0 or -1 (reported). */
static int harness_unit(struct htrack *t, int a, int r, const json_t *ctx)
{
	struct arm_round *x = &t->ar[a][r];
	char key[ROUND_KEY_MAX], h[17] = "";
	round_key(key, sizeof key, r, th_arms[a], "harness", NULL);
	struct ka_err e;
	json_t *done = NULL;
	int have = round_unit_get(t->r.d.j, key, &done, &e), rc = -1;
	if (have < 0) {
		procrun_fail(&t->r, "%s", e.msg);
		return -1;
	}
	char *sft = xasprintf("%s/r%d_%s_sft.jsonl", t->tr.dir_data, r, th_arms[a]);
	const char *jh = json_string_value(json_object_get(done, "sft_hash"));
	struct harness_result hr;
	memset(&hr, 0, sizeof hr);
	if (have == 0) {
		unit_restore(x, done);
		if (!engine_hash_path(sft, h) && jh && !strcmp(h, jh)) {
			rc = 0;
			goto out;
		}
		if (x->version >= 0 && run_version(t, a, r, x->version, ctx, &hr)) {
			procrun_fail(&t->r,
				     "%s: the journaled harness round-%d now fails: %s; use "
				     "--fresh",
				     key, x->version, hr.why);
			goto out;
		}
	} else {
		choose(t, a, r, ctx, &hr);
		take_result(x, &hr);
	}
	if (!hr.examples)
		hr.examples = json_array();
	if (write_sft(sft, &hr, h)) {
		procrun_fail(&t->r, "%s: cannot write the SFT set %s", key, sft);
		goto out;
	}
	if (have == 0 && (!jh || strcmp(h, jh))) {
		procrun_fail(&t->r,
			     "%s: the harness gives other examples than journaled; use --fresh",
			     key);
		goto out;
	}
	json_t *oc = have ? unit_json(x, h) : NULL;
	if (oc && round_unit_put(t->r.d.j, key, oc, &e))
		procrun_fail(&t->r, "%s", e.msg);
	else
		rc = 0;
	json_decref(oc);
out:
	harness_result_free(&hr);
	json_decref(done);
	free(sft);
	return rc;
}

const char *th_vname(int v, char *buf, size_t cap)
{
	if (v < 0)
		snprintf(buf, cap, "no harness");
	else
		snprintf(buf, cap, "round-%d", v);
	return buf;
}

/* ---- training and sampling ------------------------------------------------------ */

/* The engine's train hyper of arm round x. */
static json_t *train_hyper(const struct htrack *t, const struct arm_round *x)
{
	const json_t *h = x->hyper;
	int r = (int)json_integer_value(json_object_get(h, "lora_r"));
	return json_pack("{s:s,s:O,s:O,s:O,s:i,s:i,s:O}", "method", t->o->finetune, "epochs",
			 json_object_get(h, "epochs"), "lr", json_object_get(h, "lr"), "batch",
			 json_object_get(h, "batch"), "lora_r", r, "lora_alpha", 2 * r, "order",
			 json_object_get(h, "order"));
}

/* Where a sample call of round r grades into: x's held-out and train
 * figures and the verified train replies ver. */
static struct trainee_graded graded_of(struct arm_round *x, json_t *ver, int r)
{
	struct trainee_graded g = {.hc = x->c,
				   .hok = x->ok,
				   .tc = x->tc,
				   .tok = x->tok,
				   .hs = x->solved,
				   .verified = ver,
				   .round = r};
	return g;
}

/* Arm a at round r: train the base on the round's SFT set (none: the base
 * stays as it is) and sample the model on the held-out and train prompts;
 * its verified train replies join the arm's pool. Both arms use the same
 * seeds, so equal SFT sets give equal models. 0 or -1 (reported). */
static int train_and_sample(struct htrack *t, int a, int r)
{
	const struct harness_opts *o = t->o;
	struct arm_round *x = &t->ar[a][r];
	struct ka_err e;
	char key[ROUND_KEY_MAX];
	char *model = NULL;
	int rc = 0;
	x->loss = NAN;
	if (x->n_examples > 0) {
		round_key(key, sizeof key, r, th_arms[a], "train", NULL);
		char *sft = xasprintf("%s/r%d_%s_sft.jsonl", t->tr.dir_data, r, th_arms[a]);
		model = xasprintf("%s/%s/r%d", t->tr.dir_models, th_arms[a], r);
		json_t *hyper = train_hyper(t, x), *res = NULL;
		rc = trainee_train(&t->tr, key, o->trainee, sft, (size_t)x->n_examples, hyper,
				   o->p.seed + 7919 * r, model, &res, &e);
		const json_t *loss = json_object_get(res, "final_loss");
		if (json_is_number(loss))
			x->loss = json_number_value(loss);
		json_decref(hyper);
		json_decref(res);
		free(sft);
	} else {
		th_say(t, "r%d/%s: no example to train on; the arm samples the base", r,
		       th_arms[a]);
		model = xstrdup(o->trainee);
	}
	json_t *ver = json_array();
	struct trainee_graded g = graded_of(x, ver, r);
	round_key(key, sizeof key, r, th_arms[a], "sample", NULL);
	if (!rc)
		rc = trainee_sample(&t->tr, key, model, 1, 1, o->p.seed + 1000 * r, &g, &e);
	if (rc)
		procrun_fail(&t->r, "%s", e.msg);
	else
		pool_add(t->pool[a], ver);
	x->used = g.used;
	json_decref(ver);
	free(model);
	return rc ? -1 : 0;
}

/* ---- the rounds -------------------------------------------------------------------- */

static struct arm_round *new_rounds(int R, int nh, int nt)
{
	struct arm_round *a = xcalloc((size_t)R + 1, sizeof *a);
	for (int r = 0; r <= R; r++) {
		a[r].c = xcalloc((size_t)nh + 1, sizeof(double));
		a[r].ok = xcalloc((size_t)nh + 1, sizeof(double));
		a[r].solved = xcalloc((size_t)nh + 1, sizeof(int));
		a[r].tc = xcalloc((size_t)nt + 1, sizeof(double));
		a[r].tok = xcalloc((size_t)nt + 1, sizeof(double));
		a[r].diversity = -1;
		a[r].loss = NAN;
		a[r].version = r ? -1 : 0;
		snprintf(a[r].status, sizeof a[r].status, "%s", r ? "failed" : "ok");
	}
	return a;
}

/* Round 0: the base on held-out (C0, both arms) and train (both pools). */
static int round0(struct htrack *t)
{
	struct arm_round *x = &t->ar[IMP][0], *y = &t->ar[FRZ][0];
	json_t *ver = json_array();
	struct trainee_graded g = graded_of(x, ver, 0);
	char key[ROUND_KEY_MAX];
	struct ka_err e;
	round_key(key, sizeof key, 0, "base", "sample", NULL);
	int rc = trainee_sample(&t->tr, key, t->o->trainee, 1, 1, t->o->p.seed, &g, &e);
	if (rc) {
		procrun_fail(&t->r, "%s", e.msg);
		json_decref(ver);
		return -1;
	}
	memcpy(y->c, x->c, sizeof(double) * (size_t)t->nh);
	memcpy(y->ok, x->ok, sizeof(double) * (size_t)t->nh);
	memcpy(y->solved, x->solved, sizeof(int) * (size_t)t->nh);
	memcpy(y->tc, x->tc, sizeof(double) * (size_t)t->nt);
	memcpy(y->tok, x->tok, sizeof(double) * (size_t)t->nt);
	x->used = y->used = g.used;
	pool_add(t->pool[IMP], ver);
	pool_add(t->pool[FRZ], ver);
	x->n_pool = y->n_pool = (int)json_array_size(ver);
	json_decref(ver);
	return 0;
}

/* Round r of the improved arm: the edit, then training and sampling. */
static int round_improved(struct htrack *t, int r)
{
	json_t *ctx = build_ctx(t, IMP, r);
	int rc = th_edit(t, r, ctx);
	t->ar[IMP][r].n_pool = (int)json_array_size(t->pool[IMP]);
	if (!rc)
		rc = harness_unit(t, IMP, r, ctx);
	json_decref(ctx);
	return rc ? rc : train_and_sample(t, IMP, r);
}

static int round_frozen(struct htrack *t, int r)
{
	json_t *ctx = build_ctx(t, FRZ, r);
	t->ar[FRZ][r].n_pool = (int)json_array_size(t->pool[FRZ]);
	int rc = harness_unit(t, FRZ, r, ctx);
	json_decref(ctx);
	return rc ? rc : train_and_sample(t, FRZ, r);
}

static int run_rounds(struct htrack *t)
{
	int added, removed;
	th_save_version(t, 0, &added, &removed);
	if (round0(t))
		return -1;
	th_say(t, "round 0: C0 %.3f on %d held-out tasks; %d verified train kernels",
	       th_mean(t->ar[IMP][0].c, t->nh), t->nh, t->ar[IMP][0].n_pool);
	for (int r = 1; r <= t->R; r++) {
		if (round_improved(t, r) || round_frozen(t, r))
			return -1;
		th_say(t, "round %d: C improved %.3f, C frozen %.3f", r,
		       th_mean(t->ar[IMP][r].c, t->nh), th_mean(t->ar[FRZ][r].c, t->nh));
	}
	return 0;
}

/* ---- the scorecard ------------------------------------------------------------------ */

static json_t *row_json(const struct htrack *t, int a, int r, const struct metrics_figure *c,
			const struct metrics_figure *ok)
{
	const struct arm_round *x = &t->ar[a][r];
	char h[17] = "";
	if (x->version >= 0)
		harness_hash(t->hv[x->version], h);
	json_t *row = json_pack(
		"{s:i,s:s,s:o,s:o,s:o,s:i,s:i,s:i,s:i,s:o,s:s,s:i,s:s,s:o}", "round", r, "arm",
		th_arms[a], "c", scorecard_figure_json(c), "correct", scorecard_figure_json(ok),
		"diversity", num_or_null(x->diversity), "n_examples", x->n_examples, "n_selected",
		x->n_selected, "n_distinct", x->n_distinct, "n_pool", x->n_pool, "train_loss",
		num_or_null(x->loss), "harness", h[0] ? h : "none", "harness_version", x->version,
		"harness_status", x->status, "budget_used", round_budget_json(&x->used));
	if (x->reason[0])
		json_object_set_new(row, "harness_reason", json_string(x->reason));
	if (x->hyper)
		json_object_set(row, "hyper", x->hyper);
	json_object_set_new(row, "train_verified", json_real(th_mean(x->tok, t->nt)));
	return row;
}

/* The rows and the final round's figures (c[arm], ok, d = improved - frozen). */
static json_t *rows_json(const struct htrack *t, struct metrics_figure c[2],
			 struct metrics_figure *d)
{
	json_t *rows = json_array();
	uint64_t s0 = (uint64_t)t->o->p.seed;
	for (int r = 0; r <= t->R; r++) {
		for (int a = 0; a < 2; a++) {
			/* round 0 is one evaluation: the same seed gives both arms one CI */
			uint64_t sd = s0 + 31 * (uint64_t)r + (r ? (uint64_t)a : 0);
			struct metrics_figure ok;
			round_mean_figure(t->ar[a][r].c, t->nh, sd, &c[a]);
			round_mean_figure(t->ar[a][r].ok, t->nh, sd + 7, &ok);
			json_t *row = row_json(t, a, r, &c[a], &ok);
			if (a == IMP) {
				round_paired_diff(t->ar[IMP][r].c, t->ar[FRZ][r].c, t->nh,
						  s0 + 1001 + (uint64_t)r, d);
				json_object_set_new(row, "c_minus_frozen",
						    scorecard_figure_json(d));
				json_object_set_new(row, "improvement_spend",
						    round_budget_json(&t->spend[r]));
				if (r > 0) {
					const json_t *ed = json_array_get(t->edits, (size_t)r - 1);
					json_int_t n = json_integer_value(
							       json_object_get(ed, "lines_added")) +
						       json_integer_value(json_object_get(
							       ed, "lines_removed"));
					json_object_set(row, "edit", (json_t *)ed);
					json_object_set_new(row, "harness_lines_changed",
							    json_integer(n));
				}
			}
			json_array_append_new(rows, row);
		}
	}
	return rows;
}

static json_t *build_scorecard(const struct htrack *t)
{
	const struct harness_opts *o = t->o;
	json_t *sc = procrun_scorecard_base(&t->r, "harness_rsi");
	json_object_set_new(sc, "trainee", trainee_model_json(&t->tr, o->trainee));
	json_object_set_new(sc, "k", json_integer(o->k));
	struct metrics_figure c[2], d, c0;
	json_object_set_new(sc, "rounds", rows_json(t, c, &d));
	round_mean_figure(t->ar[IMP][0].c, t->nh, (uint64_t)o->p.seed, &c0);
	enum metrics_verdict v = metrics_rsi_verdict(&d, c[IMP].value > c0.value);
	struct round_budget allow = trainee_allowance(&t->tr, t->R), spend = {0, 0, 0}, used[2];
	memset(used, 0, sizeof used);
	int accepted = 0;
	for (int r = 0; r <= t->R; r++) {
		round_budget_add(&spend, &t->spend[r]);
		for (int a = 0; a < 2; a++)
			round_budget_add(&used[a], &t->ar[a][r].used);
	}
	for (size_t i = 0; i < json_array_size(t->edits); i++)
		accepted += json_is_true(json_object_get(json_array_get(t->edits, i), "accepted"));
	char h0[17];
	harness_hash(t->hv[0], h0);
	json_t *sum = json_pack(
		"{s:i,s:o,s:o,s:o,s:o,s:s,s:s,s:o,s:{s:o,s:o},s:o,s:i,s:i,s:s,s:s,s:i,s:o,s:o,s:i,"
		"s:i,s:s}",
		"rounds", t->R, "c0", scorecard_figure_json(&c0), "c_improved",
		scorecard_figure_json(&c[IMP]), "c_frozen", scorecard_figure_json(&c[FRZ]),
		"improved_vs_frozen", scorecard_figure_json(&d), "verdict", metrics_verdict_name(v),
		"verdict_rule", HARNESS_VERDICT_RULE, "budget_allowed", round_budget_json(&allow),
		"budget_used", "improved", round_budget_json(&used[IMP]), "frozen",
		round_budget_json(&used[FRZ]), "improvement_spend", round_budget_json(&spend),
		"n_train", t->nt, "n_heldout", t->nh, "engine", t->tr.en.name, "finetune",
		o->finetune, "data_budget", o->max_examples, "bounds",
		harness_bounds_json(&t->bounds), "defaults", harness_hyper_json(&t->defaults),
		"edits_accepted", accepted, "edits_rejected",
		(int)json_array_size(t->edits) - accepted, "harness0", h0);
	json_object_set_new(sc, "summary", sum);
	return sc;
}

/* ---- the run --------------------------------------------------------------------------- */

static void ht_free(struct htrack *t)
{
	for (int a = 0; a < 2; a++) {
		for (int r = 0; t->ar[a] && r <= t->R; r++) {
			struct arm_round *x = &t->ar[a][r];
			free(x->c);
			free(x->ok);
			free(x->solved);
			free(x->tc);
			free(x->tok);
			json_decref(x->hyper);
		}
		free(t->ar[a]);
		json_decref(t->pool[a]);
	}
	for (int r = 0; t->hv && r <= t->R; r++)
		free(t->hv[r]);
	free(t->hv);
	free(t->spend);
	free(t->edit_tmpl);
	free(t->dir_h);
	json_decref(t->edits);
	trainee_close(&t->tr);
	procrun_free(&t->r);
}

/* Before OUT is touched: the split, the researcher, round 0's harness (it
 * must load) and the edit template. 0 or -1 (reported). */
static int ht_prepare(struct htrack *t, const struct harness_opts *o)
{
	if (procrun_prepare(&t->r, &o->p, "harness"))
		return -1;
	t->R = o->rounds;
	t->nh = t->r.heldout.n;
	t->nt = t->r.train.n;
	t->box = (struct luabox_limits){.instructions = o->p.lua_instructions,
					.memory = o->p.lua_memory,
					.wall_s = o->p.lua_wall_s};
	harness_bounds_default(&t->bounds, o->max_examples);
	t->defaults =
		(struct harness_hyper){o->lr, o->epochs, o->lora_r, o->batch, o->max_examples, 0};
	struct ka_err e;
	char why[600];
	if (harness_hyper_check(&t->defaults, &t->bounds, why, sizeof why)) {
		procrun_fail(&t->r, "the defaults are out of bounds: %s", why);
		return -1;
	}
	if (trainee_open(&t->tr, &t->r, o->engine, o->engine_timeout_s, o->prompt_style, o->k,
			 &e)) {
		procrun_fail(&t->r, "%s", e.msg);
		return -1;
	}
	char *root = xasprintf("%s/harnesses", util_data_root());
	char *h0 = o->harness ? xstrdup(o->harness) : xasprintf("%s/default.lua", root);
	char *et = xasprintf("%s/edit.md", o->harnesses ? o->harnesses : root);
	t->hv = xcalloc((size_t)t->R + 1, sizeof *t->hv);
	size_t len;
	int rc = 0;
	if (util_read_file(h0, HARNESS_FILE_MAX, &t->hv[0], &len, &e) ||
	    util_read_file(et, 1 << 20, &t->edit_tmpl, &len, &e)) {
		procrun_fail(&t->r, "%s", e.msg);
		rc = -1;
	} else if (harness_validate(t->hv[0], &t->box, why, sizeof why)) {
		procrun_fail(&t->r, "%s: %s", h0, why);
		rc = -1;
	}
	free(root);
	free(h0);
	free(et);
	if (rc)
		return -1;
	struct round_budget allow[2] = {trainee_allowance(&t->tr, t->R),
					trainee_allowance(&t->tr, t->R)};
	if (round_budgets_equal(allow, th_arms, 2, &e)) {
		procrun_fail(&t->r, "%s", e.msg);
		return -1;
	}
	return 0;
}

/* The run's identity: what decides its results. */
static json_t *identity(const struct htrack *t)
{
	const struct harness_opts *o = t->o;
	json_t *args = procrun_identity(&t->r);
	char h0[17], et[17];
	harness_hash(t->hv[0], h0);
	harness_hash(t->edit_tmpl, et);
	json_object_set_new(args, "trainee", json_string(o->trainee));
	json_object_set_new(args, "engine", json_string(o->engine));
	json_object_set_new(args, "k", json_integer(o->k));
	json_object_set_new(args, "rounds", json_integer(o->rounds));
	json_object_set_new(args, "harness_hash", json_string(h0));
	json_object_set_new(args, "edit_template_hash", json_string(et));
	json_object_set_new(args, "finetune", json_string(o->finetune));
	json_object_set_new(args, "prompt_style", json_string(o->prompt_style));
	json_object_set_new(args, "defaults", harness_hyper_json(&t->defaults));
	json_object_set_new(args, "lua_instructions",
			    json_integer((json_int_t)o->p.lua_instructions));
	json_object_set_new(args, "lua_memory", json_integer((json_int_t)o->p.lua_memory));
	return args;
}

static void print_summary(const struct htrack *t, const json_t *sc, const char *path)
{
	printf("scorecard: %s\n", path);
	if (t->o->p.quiet)
		return;
	const json_t *s = json_object_get(sc, "summary");
	struct metrics_figure f[4];
	static const char *const keys[] = {"c0", "c_improved", "c_frozen", "improved_vs_frozen"};
	for (int i = 0; i < 4; i++)
		scorecard_figure_get(json_object_get(s, keys[i]), &f[i]);
	printf("  C0 %.3f  C improved %.3f  C frozen %.3f  improved - frozen %+.3f [%+.3f, "
	       "%+.3f]  %s\n",
	       f[0].value, f[1].value, f[2].value, f[3].value, f[3].lo, f[3].hi,
	       json_string_value(json_object_get(s, "verdict")));
	printf("  edits accepted %d, rejected %d; engine calls run by this process: %d; "
	       "researcher requests sent: %d\n",
	       (int)json_integer_value(json_object_get(s, "edits_accepted")),
	       (int)json_integer_value(json_object_get(s, "edits_rejected")), t->tr.calls_run,
	       t->r.sent);
}

int track_harness_run(const struct harness_opts *o)
{
	struct htrack t;
	memset(&t, 0, sizeof t);
	t.o = o;
	signal(SIGPIPE, SIG_IGN);
	int rc = KA_EXIT_USAGE;
	struct ka_err e;
	if (ht_prepare(&t, o))
		goto out;
	json_t *args = identity(&t);
	rc = procrun_open(&t.r, args);
	json_decref(args);
	if (rc)
		goto out;
	rc = KA_EXIT_FAIL;
	t.dir_h = xasprintf("%s/harness", o->p.out);
	if (o->p.fresh) /* no version of an earlier run may pass for this one's */
		util_rmtree(t.dir_h);
	if (util_mkdirs(t.dir_h, &e) || trainee_mkdirs(&t.tr, &e)) {
		procrun_fail(&t.r, "%s", e.msg);
		goto out;
	}
	for (int a = 0; a < 2; a++) {
		t.ar[a] = new_rounds(t.R, t.nh, t.nt);
		t.pool[a] = json_array();
	}
	t.edits = json_array();
	t.spend = xcalloc((size_t)t.R + 1, sizeof *t.spend);
	th_say(&t, "harness track in %s: %d train, %d held-out tasks, %d rounds", o->p.out, t.nt,
	       t.nh, t.R);
	if (run_rounds(&t))
		goto out;
	json_t *sc = build_scorecard(&t);
	char *path = NULL;
	if (procrun_write_scorecard(&t.r, sc, &path) == 0) {
		print_summary(&t, sc, path);
		rc = KA_EXIT_OK;
	}
	free(path);
	json_decref(sc);
out:
	ht_free(&t);
	return rc;
}
