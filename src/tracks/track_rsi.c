/* track_rsi.c: track 2, weight RSI (docs/rsi.md). An open model is trained
 * on kernels and scored on the held-out split every round, in three arms:
 *
 *   self          trains on its own verified train-split kernels, accumulated
 *                 over the rounds (round 0's from the base, then its own);
 *   fresh_frozen  trains on kernels freshly sampled from the unchanged base
 *                 each round, as many examples as self has that round;
 *   round0        retrains on round 0's data every round;
 *
 * and, with --interrupt-after I (the recursion-interruption control), a
 * fourth from round I+1 on:
 *
 *   ckpt_frozen   trains on kernels freshly sampled from self's round-I
 *                 checkpoint, frozen, as many examples as self has that round
 *                 (self is the continued recursion).
 *
 * Per round and arm the diagnostics of rsi_diag.h (diversity and compression
 * of the kernels trained on, retention, self minus fresh) are printed,
 * journaled as unit r<r>/<arm>/diag and written in the scorecard rows.
 *
 * Every arm retrains from the base each round (ReST-EM) unless --continue.
 * The model is a trainee (trainee.h): its sample and train calls are engine
 * calls (engine.h), each a journaled unit, its replies graded through
 * round.h (one grade per task and source hash over the run); the split, the
 * output folder and the scorecard base come from procrun.h.
 * Every arm draws the same generations per round: k per train task and k per
 * held-out task. */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "bank_std.h"
#include "metrics.h"
#include "procrun.h"
#include "rsi_diag.h"
#include "scorecard.h"
#include "track.h"
#include "trainee.h"

#define N_ARMS 4
#define SELF 0
#define FRESH 1
#define ROUND0 2
#define CKPT 3
static const char *const arms[N_ARMS] = {"self", "fresh_frozen", "round0", "ckpt_frozen"};

/* The weight-RSI form of the verdict rule (metrics_rsi_verdict), written in
 * the scorecard's summary.verdict_rule. */
static const char RSI_VERDICT_RULE[] =
	"The key difference D is the task-level paired difference of held-out mean C, self "
	"minus fresh_frozen at the final round, with a 95% percentile bootstrap CI over "
	"held-out tasks (2000 resamples). 'positive' when the CI of D lies above 0 and self "
	"also beats round0 at the final round (self_minus_round0 > 0); 'negative' when the CI "
	"lies below 0; otherwise 'no signal'. Fixed before the run.";

void rsi_opts_default(struct rsi_opts *o)
{
	memset(o, 0, sizeof *o);
	procedure_opts_default(&o->p);
	o->p.model = "cmd:false"; /* procrun needs a spec; the engine is the model */
	o->engine = "torch";
	o->finetune = "auto";
	o->prompt_style = "solver";
	o->k = 3;
	o->rounds = 5;
	o->per_task_cap = 4;
	o->epochs = 2;
	o->batch = 8;
	o->lr = 1e-4;
	o->engine_timeout_s = 86400;
}

/* One arm's per-round results over the held-out tasks. */
struct arm_round {
	double *c;		  /* per task mean score over k samples */
	double *ok;		  /* per task fraction ok */
	int *solved;		  /* per task: some sample ok */
	struct rsi_samples smp;	  /* the held-out samples (speed figures) */
	int n_examples;		  /* SFT examples trained on this round */
	struct rsi_data_diag dd;  /* diversity of the kernels trained on */
	struct round_budget used; /* generations drawn */
	int ran;		  /* the arm ran this round (ckpt_frozen: after I) */
};

struct rtrack {
	const struct rsi_opts *o;
	struct procrun r;
	struct trainee tr; /* the model's engine calls (tr.score_compiled: C
			    * against the compiled baseline) */
	int R, nh, nt;
	int n_arms;	  /* 3, or 4 with --interrupt-after */
	int standardized; /* the bank holds standardized.json: std */
	struct bank_std_info std;
	char *ckpt;		      /* self's model after round I (the frozen producer) */
	struct arm_round *ar[N_ARMS]; /* [round], round 0 shared */
	json_t *d0;		      /* round 0's verified train examples */
	json_t *acc_self;	      /* self's accumulated verified examples */
};

static void fail(const struct rtrack *t, const char *fmt, const char *msg)
{
	procrun_fail(&t->r, fmt, msg);
}

/* ---- engine calls ----------------------------------------------------------- */

/* Keep at most per_task_cap distinct (by code hash) examples per task. */
static json_t *capped(const struct rtrack *t, const json_t *ex)
{
	json_t *out = json_array(), *seen = json_object(), *count = json_object();
	size_t i;
	json_t *x;
	for (i = 0; i < json_array_size(ex) && (x = json_array_get(ex, i)); i++) {
		const char *task = json_string_value(json_object_get(x, "task"));
		const char *h = json_string_value(json_object_get(x, "hash"));
		char key[300];
		snprintf(key, sizeof key, "%s/%s", task, h);
		json_int_t c = json_integer_value(json_object_get(count, task));
		if (json_object_get(seen, key) || c >= t->o->per_task_cap)
			continue;
		json_object_set_new(seen, key, json_true());
		json_object_set_new(count, task, json_integer(c + 1));
		json_array_append(out, x);
	}
	json_decref(seen);
	json_decref(count);
	return out;
}

/* Train arm on examples ex from base (or from the arm's previous model) as
 * unit r<round>/<arm>/train; *model is the new model folder (caller frees),
 * or from itself when ex is empty (no call). */
static int train(struct rtrack *t, int round, int arm, const json_t *ex, const char *from,
		 char **model, struct ka_err *e)
{
	const struct rsi_opts *o = t->o;
	char key[ROUND_KEY_MAX];
	round_key(key, sizeof key, round, arms[arm], "train", NULL);
	char *exp = xasprintf("%s/r%d_%s_sft.jsonl", t->tr.dir_data, round, arms[arm]);
	char *out = xasprintf("%s/%s/r%d", t->tr.dir_models, arms[arm], round);
	*model = NULL;
	int rc = -1;
	json_t *res = NULL, *hyper = NULL;
	if (!json_array_size(ex)) {
		/* nothing verified to train on: the arm keeps the model it starts
		 * from this round (a fact of the run, not an error) */
		if (!o->p.quiet)
			fprintf(stderr, "ka: %s: no verified examples; the arm keeps %s\n", key,
				from);
		*model = xstrdup(from);
		rc = 0;
		goto out;
	}
	if (trainee_write_sft(exp, ex, e))
		goto out;
	hyper = json_pack("{s:s,s:i,s:f,s:i}", "method", o->finetune, "epochs", o->epochs, "lr",
			  o->lr, "batch", o->batch);
	if (trainee_train(&t->tr, key, from, exp, json_array_size(ex), hyper,
			  o->p.seed + 7919 * round + 101 * arm, out, &res, e))
		goto out;
	*model = out;
	out = NULL;
	rc = 0;
out:
	json_decref(hyper);
	json_decref(res);
	free(exp);
	free(out);
	return rc;
}

/* ---- the rounds --------------------------------------------------------------- */

static struct arm_round *new_rounds(int R, int nh, int k)
{
	struct arm_round *a = xcalloc((size_t)R + 1, sizeof *a);
	for (int r = 0; r <= R; r++) {
		a[r].c = xcalloc((size_t)nh + 1, sizeof(double));
		a[r].ok = xcalloc((size_t)nh + 1, sizeof(double));
		a[r].solved = xcalloc((size_t)nh + 1, sizeof(int));
		rsi_samples_init(&a[r].smp, nh, k);
		a[r].dd.distinct = a[r].dd.compression = -1;
	}
	return a;
}

/* dst takes src's held-out results and generations (not its training). */
static void copy_round(struct arm_round *dst, const struct arm_round *src, int nh)
{
	memcpy(dst->c, src->c, sizeof(double) * (size_t)nh);
	memcpy(dst->ok, src->ok, sizeof(double) * (size_t)nh);
	memcpy(dst->solved, src->solved, sizeof(int) * (size_t)nh);
	memcpy(dst->smp.s, src->smp.s, sizeof *src->smp.s * (size_t)nh * (size_t)src->smp.k);
	memcpy(dst->smp.n, src->smp.n, sizeof *src->smp.n * (size_t)nh);
	dst->used = src->used;
}

/* Where a sample call of round r grades into: a's held-out figures (a may
 * be NULL: none) and the verified train replies ver. */
static struct trainee_graded graded_of(struct arm_round *a, json_t *ver, int r)
{
	struct trainee_graded g = {.hc = a ? a->c : NULL,
				   .hok = a ? a->ok : NULL,
				   .hs = a ? a->solved : NULL,
				   .hsmp = a ? &a->smp : NULL,
				   .verified = ver,
				   .round = r};
	return g;
}

/* n examples from pool (cycled when short, cut when long). */
static json_t *take_n(const json_t *pool, size_t n)
{
	json_t *out = json_array();
	size_t m = json_array_size(pool);
	for (size_t i = 0; m && i < n; i++)
		json_array_append(out, json_array_get(pool, i % m));
	return out;
}

/* Round 0: the base on the held-out split (one evaluation every arm
 * shares) and the train split, whose verified kernels are D0. */
static int round_zero(struct rtrack *t, struct ka_err *e)
{
	char key[ROUND_KEY_MAX];
	t->d0 = json_array();
	struct trainee_graded g0 = graded_of(&t->ar[SELF][0], t->d0, 0);
	round_key(key, sizeof key, 0, "base", "sample", NULL);
	if (trainee_sample(&t->tr, key, t->o->model, 1, 1, t->o->p.seed, &g0, e))
		return -1;
	t->ar[SELF][0].used = g0.used;
	for (int a = 0; a < t->n_arms; a++) {
		if (a != SELF)
			copy_round(&t->ar[a][0], &t->ar[SELF][0], t->nh);
		t->ar[a][0].ran = a != CKPT;
	}
	t->acc_self = json_deep_copy(t->d0);
	return 0;
}

/* Train examples freshly sampled from producer as unit r<r>/<arm>/<phase>,
 * verified, capped per task and cut or cycled to as many as self has this
 * round; the generations drawn go to *extra. NULL with e on failure. */
static json_t *producer_examples(struct rtrack *t, int r, int a, const char *phase,
				 const char *producer, int64_t seed, struct round_budget *extra,
				 struct ka_err *e)
{
	char key[ROUND_KEY_MAX];
	json_t *ver = json_array();
	struct trainee_graded g = graded_of(NULL, ver, r);
	round_key(key, sizeof key, r, arms[a], phase, NULL);
	if (trainee_sample(&t->tr, key, producer, 0, 1, seed, &g, e)) {
		json_decref(ver);
		return NULL;
	}
	*extra = g.used;
	json_t *pool = capped(t, ver);
	json_t *ex = take_n(pool, (size_t)t->ar[SELF][r].n_examples);
	json_decref(pool);
	json_decref(ver);
	return ex;
}

/* The model arm a trains from in a round: the base (ReST-EM), or with
 * --continue its previous model (ckpt_frozen's first: the checkpoint). */
static const char *train_from(const struct rtrack *t, int a, char *const *prev)
{
	if (!t->o->cont)
		return t->o->model;
	if (prev[a])
		return prev[a];
	return a == CKPT ? t->ckpt : t->o->model;
}

/* Round r of arm a: its training set, the train call, then the sample call
 * on the held-out split (and on the train split for the arms that draw
 * their own train generations). prev[a] is the arm's model (replaced). */
static int run_arm(struct rtrack *t, int r, int a, char **prev, struct ka_err *e)
{
	int64_t seed = t->o->p.seed + 1000 * r;
	struct arm_round *ar = &t->ar[a][r];
	struct round_budget extra = {0, 0, 0};
	json_t *ex = a == SELF	  ? capped(t, t->acc_self)
		     : a == FRESH ? producer_examples(t, r, a, "base_sample", t->o->model,
						      seed + 500, &extra, e)
		     : a == CKPT  ? producer_examples(t, r, a, "ckpt_sample", t->ckpt, seed + 700,
						      &extra, e)
				  : capped(t, t->d0);
	if (!ex)
		return -1;
	ar->n_examples = (int)json_array_size(ex);
	rsi_diag_examples(ex, t->tr.lang, &ar->dd);
	char *model = NULL;
	int rc = train(t, r, a, ex, train_from(t, a, prev), &model, e);
	json_decref(ex);
	if (rc)
		return -1;
	free(prev[a]);
	prev[a] = model;
	json_t *ver = json_array();
	struct trainee_graded gs = graded_of(ar, ver, r);
	char key[ROUND_KEY_MAX];
	round_key(key, sizeof key, r, arms[a], "sample", NULL);
	/* fresh_frozen and ckpt_frozen drew their train generations above */
	rc = trainee_sample(&t->tr, key, model, 1, a == SELF || a == ROUND0, seed + a, &gs, e);
	for (size_t i = 0; !rc && a == SELF && i < json_array_size(ver); i++)
		json_array_append(t->acc_self, json_array_get(ver, i));
	json_decref(ver);
	ar->used = gs.used;
	round_budget_add(&ar->used, &extra);
	ar->ran = 1;
	return rc;
}

static json_t *num_or_null(double x)
{
	return x < 0 ? json_null() : json_real(x);
}

/* The scorecard row of arm a at round r: C, correct and compiled x with
 * their CIs, the diagnostics, and the paired differences to fresh_frozen
 * (and, for self after the interruption, to ckpt_frozen). */
static json_t *row_json(const struct rtrack *t, int r, int a)
{
	const struct arm_round *ar = &t->ar[a][r];
	/* round 0 is one evaluation: the same seed gives every arm the same CI */
	uint64_t sd = (uint64_t)t->o->p.seed + 31 * (uint64_t)r + (r ? (uint64_t)a : 0);
	struct metrics_figure cf, okf, cx, d;
	round_mean_figure(ar->c, t->nh, sd, &cf);
	round_mean_figure(ar->ok, t->nh, sd + 7, &okf);
	rsi_samples_compiled_x(&ar->smp, &cx);
	json_t *row =
		json_pack("{s:i,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:i,s:o}", "round", r, "arm", arms[a],
			  "c", scorecard_figure_json(&cf), "correct", scorecard_figure_json(&okf),
			  "compiled_x", scorecard_figure_json(&cx), "retention",
			  num_or_null(rsi_diag_retention(t->ar[SELF][0].solved, ar->solved, t->nh)),
			  "diversity", num_or_null(r ? ar->dd.distinct : -1), "compression",
			  num_or_null(r ? ar->dd.compression : -1), "n_examples", ar->n_examples,
			  "budget_used", round_budget_json(&ar->used));
	if (a != FRESH) {
		round_paired_diff(ar->c, t->ar[FRESH][r].c, t->nh, sd + 11, &d);
		json_object_set_new(row, "c_minus_fresh", scorecard_figure_json(&d));
	}
	if (a == SELF && t->n_arms > CKPT && t->ar[CKPT][r].ran) {
		round_paired_diff(ar->c, t->ar[CKPT][r].c, t->nh, sd + 13, &d);
		json_object_set_new(row, "c_minus_ckpt", scorecard_figure_json(&d));
	}
	return row;
}

/* One line of a row's diagnostics on stderr. */
static void print_diag(const json_t *row)
{
	struct metrics_figure c, f;
	scorecard_figure_get(json_object_get(row, "c"), &c);
	scorecard_figure_get(json_object_get(row, "c_minus_fresh"), &f);
	const json_t *rt = json_object_get(row, "retention"),
		     *dv = json_object_get(row, "diversity"),
		     *cp = json_object_get(row, "compression");
	fprintf(stderr, "ka: r%lld/%s: C %.3f",
		(long long)json_integer_value(json_object_get(row, "round")),
		json_string_value(json_object_get(row, "arm")), c.value);
	if (json_is_number(rt))
		fprintf(stderr, "  retention %.2f", json_number_value(rt));
	if (json_is_number(dv))
		fprintf(stderr, "  diversity %.3f", json_number_value(dv));
	if (json_is_number(cp))
		fprintf(stderr, "  compression %.3f", json_number_value(cp));
	if (f.defined)
		fprintf(stderr, "  minus fresh %+.3f", f.value);
	fprintf(stderr, "  (%lld examples)\n",
		(long long)json_integer_value(json_object_get(row, "n_examples")));
}

/* The diagnostics of round r, every arm that ran: printed, and journaled
 * as unit r<r>/<arm>/diag (round 0: r0/base/diag) unless it is already. */
static int log_round(struct rtrack *t, int r, struct ka_err *e)
{
	for (int a = 0; a < t->n_arms; a++) {
		if (!t->ar[a][r].ran || (r == 0 && a != SELF))
			continue;
		json_t *row = row_json(t, r, a), *old = NULL;
		char key[ROUND_KEY_MAX];
		round_key(key, sizeof key, r, r ? arms[a] : "base", "diag", NULL);
		int got = round_unit_get(t->r.d.j, key, &old, e);
		int rc = got < 0 || (got == 1 && round_unit_put(t->r.d.j, key, row, e)) ? -1 : 0;
		if (!rc && !t->o->p.quiet)
			print_diag(row);
		json_decref(old);
		json_decref(row);
		if (rc)
			return -1;
	}
	return 0;
}

static int run_rounds(struct rtrack *t, struct ka_err *e)
{
	if (round_zero(t, e) || log_round(t, 0, e))
		return -1;
	char *prev[N_ARMS] = {NULL, NULL, NULL, NULL};
	int rc = 0;
	for (int r = 1; r <= t->R && !rc; r++) {
		for (int a = 0; a < t->n_arms && !rc; a++) {
			if (a == CKPT && r <= t->o->interrupt_after)
				/* before the interruption ckpt_frozen is self */
				copy_round(&t->ar[CKPT][r], &t->ar[SELF][r], t->nh);
			else
				rc = run_arm(t, r, a, prev, e);
		}
		if (!rc && r == t->o->interrupt_after)
			t->ckpt = xstrdup(prev[SELF]);
		if (!rc)
			rc = log_round(t, r, e);
	}
	for (int a = 0; a < N_ARMS; a++)
		free(prev[a]);
	return rc;
}

/* ---- the scorecard ------------------------------------------------------------- */

/* A copy of field of the row of arm at round r in rows (JSON null if none). */
static json_t *row_field(const json_t *rows, int r, const char *arm, const char *field)
{
	size_t i;
	json_t *row;
	json_array_foreach(rows, i, row)
	{
		if (json_integer_value(json_object_get(row, "round")) == r &&
		    !strcmp(json_string_value(json_object_get(row, "arm")), arm))
			return json_deep_copy(json_object_get(row, field));
	}
	return json_null();
}

/* What the summary says beyond the three arms: the speed baseline of C,
 * why compiled_x is null, the interruption control, the standardized bank. */
static void summary_extras(const struct rtrack *t, json_t *sum)
{
	json_object_set_new(sum, "baseline",
			    json_string(t->tr.score_compiled ? "compiled" : "eager"));
	if (json_is_null(json_object_get(sum, "compiled_x")))
		json_object_set_new(
			sum, "compiled_x_reason",
			json_string(rsi_compiled_x_reason(t->o->p.proto.timing, t->r.target)));
	if (t->n_arms > CKPT) {
		struct metrics_figure d;
		round_paired_diff(t->ar[SELF][t->R].c, t->ar[CKPT][t->R].c, t->nh,
				  (uint64_t)t->o->p.seed + 1004, &d);
		json_object_set_new(sum, "interrupt_after", json_integer(t->o->interrupt_after));
		json_object_set_new(sum, "self_minus_ckpt", scorecard_figure_json(&d));
	}
	if (t->standardized) {
		json_object_set_new(sum, "bank_tier", json_string(t->std.scale));
		json_object_set_new(sum, "anchor", json_string(t->std.anchor));
		json_object_set_new(sum, "standardized", bank_std_summary_json(&t->std));
	}
}

static json_t *build_scorecard(struct rtrack *t)
{
	const struct rsi_opts *o = t->o;
	int nh = t->nh, R = t->R;
	uint64_t s0 = (uint64_t)o->p.seed;
	json_t *sc = procrun_scorecard_base(&t->r, "weight_rsi");
	json_object_set_new(sc, "schema", json_string(SCORECARD_SCHEMA_2));
	json_object_set_new(sc, "model", trainee_model_json(&t->tr, o->model));
	json_object_set_new(sc, "k", json_integer(o->k));
	json_t *rows = json_array();
	struct round_budget used[N_ARMS];
	memset(used, 0, sizeof used);
	for (int r = 0; r <= R; r++)
		for (int a = 0; a < t->n_arms; a++) {
			round_budget_add(&used[a], &t->ar[a][r].used);
			if (t->ar[a][r].ran)
				json_array_append_new(rows, row_json(t, r, a));
		}
	json_object_set_new(sc, "rounds", rows);
	struct metrics_figure dsf, dsr, dvf;
	round_paired_diff(t->ar[SELF][R].c, t->ar[FRESH][R].c, nh, s0 + 1001, &dsf);
	round_paired_diff(t->ar[SELF][R].c, t->ar[ROUND0][R].c, nh, s0 + 1002, &dsr);
	round_paired_diff(t->ar[SELF][R].c, t->ar[SELF][0].c, nh, s0 + 1003, &dvf);
	enum metrics_verdict v = metrics_rsi_verdict(&dsf, dsr.value > 0);
	struct round_budget allow = trainee_allowance(&t->tr, R);
	json_t *used_j = json_object();
	for (int a = 0; a < t->n_arms; a++)
		json_object_set_new(used_j, arms[a], round_budget_json(&used[a]));
	json_t *sum = json_pack(
		"{s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:s,s:s,s:o,s:o,s:i,s:i,s:s,s:s,s:b,s:i}",
		"rounds", R, "c0", row_field(rows, 0, "self", "c"), "c_final",
		row_field(rows, R, "self", "c"), "correct", row_field(rows, R, "self", "correct"),
		"compiled_x", row_field(rows, R, "self", "compiled_x"), "delta_vs_frozen",
		scorecard_figure_json(&dvf), "self_minus_fresh", scorecard_figure_json(&dsf),
		"self_minus_round0", scorecard_figure_json(&dsr), "verdict",
		metrics_verdict_name(v), "verdict_rule", RSI_VERDICT_RULE, "budget_allowed",
		round_budget_json(&allow), "budget_used", used_j, "n_train", t->nt, "n_heldout", nh,
		"engine", t->tr.en.name, "finetune", o->finetune, "continued_training", o->cont,
		"per_task_cap", o->per_task_cap);
	summary_extras(t, sum);
	json_object_set_new(sc, "summary", sum);
	return sc;
}

/* ---- the run -------------------------------------------------------------------- */

static void rt_free(struct rtrack *t)
{
	for (int a = 0; a < N_ARMS; a++) {
		for (int r = 0; t->ar[a] && r <= t->R; r++) {
			free(t->ar[a][r].c);
			free(t->ar[a][r].ok);
			free(t->ar[a][r].solved);
			rsi_samples_free(&t->ar[a][r].smp);
		}
		free(t->ar[a]);
	}
	json_decref(t->d0);
	json_decref(t->acc_self);
	free(t->ckpt);
	trainee_close(&t->tr);
	procrun_free(&t->r);
}

/* The held-out bank's standardized.json, when it has one (bank_std.h):
 * its hash must still be the bank's. On CUDA, C is then scored against the
 * compiled baseline. 0, or -1 with e. */
static int read_standardized(struct rtrack *t, struct ka_err *e)
{
	const char *dir = t->r.heldout_real ? t->r.heldout_real : t->r.bank_real;
	int rc = bank_std_read(dir, &t->std, e);
	if (rc)
		return rc < 0 ? -1 : 0;
	char hash[17];
	if (bank_content_hash_hex(dir, hash, NULL, e))
		return -1;
	if (strcmp(hash, t->std.hash))
		return ka_err_set(e,
				  "%s/%s: hash: %s, but the bank's tasks hash to %s (they changed "
				  "since `ka bank standardize`; run it again)",
				  dir, BANK_STD_FILE, t->std.hash, hash);
	t->standardized = 1;
	t->tr.score_compiled = !strcmp(t->r.target, "cuda");
	return 0;
}

/* The identity of the run (every argument that decides its results). */
static json_t *rsi_identity(const struct rtrack *t)
{
	const struct rsi_opts *o = t->o;
	json_t *args = procrun_identity(&t->r);
	json_object_set_new(args, "rsi_model", json_string(o->model));
	json_object_set_new(args, "engine", json_string(o->engine));
	json_object_set_new(args, "k", json_integer(o->k));
	json_object_set_new(args, "rounds", json_integer(o->rounds));
	json_object_set_new(args, "continue", json_boolean(o->cont));
	json_object_set_new(args, "per_task_cap", json_integer(o->per_task_cap));
	json_object_set_new(args, "finetune", json_string(o->finetune));
	json_object_set_new(args, "epochs", json_integer(o->epochs));
	json_object_set_new(args, "batch", json_integer(o->batch));
	json_object_set_new(args, "lr", json_real(o->lr));
	json_object_set_new(args, "prompt_style", json_string(o->prompt_style));
	if (o->interrupt_after)
		json_object_set_new(args, "interrupt_after", json_integer(o->interrupt_after));
	return args;
}

/* Everything before OUT is touched: the split, the engine, the standardized
 * bank, the equal allowances. 0, or -1 (reported). */
static int rt_prepare(struct rtrack *t)
{
	const struct rsi_opts *o = t->o;
	struct ka_err e;
	if (procrun_prepare(&t->r, &o->p, "rsi"))
		return -1;
	if (o->interrupt_after >= o->rounds) {
		fail(t, "%s", "--interrupt-after must be before the last round (below --rounds)");
		return -1;
	}
	if (trainee_open(&t->tr, &t->r, o->engine, o->engine_timeout_s, o->prompt_style, o->k,
			 &e) ||
	    read_standardized(t, &e)) {
		fail(t, "%s", e.msg);
		return -1;
	}
	t->nh = t->r.heldout.n;
	t->nt = t->r.train.n;
	t->n_arms = o->interrupt_after ? 4 : 3;
	struct round_budget allow[N_ARMS];
	for (int a = 0; a < t->n_arms; a++)
		allow[a] = trainee_allowance(&t->tr, t->R);
	if (round_budgets_equal(allow, arms, t->n_arms, &e)) {
		fail(t, "%s", e.msg);
		return -1;
	}
	return 0;
}

static void print_summary(const struct rtrack *t, const json_t *sc)
{
	const json_t *s = json_object_get(sc, "summary");
	struct metrics_figure f;
	scorecard_figure_get(json_object_get(s, "c0"), &f);
	printf("  C0 %.3f", f.value);
	scorecard_figure_get(json_object_get(s, "c_final"), &f);
	printf("  final %.3f", f.value);
	scorecard_figure_get(json_object_get(s, "self_minus_fresh"), &f);
	printf("  self - fresh_frozen %+.3f [%+.3f, %+.3f]  %s\n", f.value, f.lo, f.hi,
	       json_string_value(json_object_get(s, "verdict")));
	if (json_object_get(s, "self_minus_ckpt")) {
		scorecard_figure_get(json_object_get(s, "self_minus_ckpt"), &f);
		printf("  continued self - ckpt_frozen (after round %d) %+.3f [%+.3f, %+.3f]\n",
		       t->o->interrupt_after, f.value, f.lo, f.hi);
	}
	scorecard_figure_get(json_object_get(s, "compiled_x"), &f);
	if (f.defined)
		printf("  compiled x %.2f [%.2f, %.2f]\n", f.value, f.lo, f.hi);
	else
		printf("  compiled x: none (%s)\n",
		       json_string_value(json_object_get(s, "compiled_x_reason")));
	printf("  engine calls run by this process: %d\n", t->tr.calls_run);
}

int track_rsi_run(const struct rsi_opts *o)
{
	struct rtrack t;
	memset(&t, 0, sizeof t);
	t.o = o;
	t.R = o->rounds;
	signal(SIGPIPE, SIG_IGN);
	int rc = KA_EXIT_USAGE;
	struct ka_err e;
	if (rt_prepare(&t))
		goto out;
	json_t *args = rsi_identity(&t);
	rc = procrun_open(&t.r, args);
	json_decref(args);
	if (rc)
		goto out;
	rc = KA_EXIT_FAIL;
	if (trainee_mkdirs(&t.tr, &e)) {
		fail(&t, "%s", e.msg);
		goto out;
	}
	for (int a = 0; a < N_ARMS; a++)
		t.ar[a] = new_rounds(t.R, t.nh, o->k);
	if (run_rounds(&t, &e)) {
		fail(&t, "%s", e.msg);
		goto out;
	}
	json_t *sc = build_scorecard(&t);
	char *path = NULL;
	if (procrun_write_scorecard(&t.r, sc, &path) == 0) {
		printf("scorecard: %s\n", path);
		if (!o->p.quiet)
			print_summary(&t, sc);
		rc = KA_EXIT_OK;
	}
	free(path);
	json_decref(sc);
out:
	rt_free(&t);
	return rc;
}
