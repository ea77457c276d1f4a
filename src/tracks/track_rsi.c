/* track_rsi.c: track 2, weight RSI (docs/rsi.md). An open model is trained
 * on kernels and scored on the held-out split every round, in three arms:
 *
 *   self          trains on its own verified train-split kernels, accumulated
 *                 over the rounds (round 0's from the base, then its own);
 *   fresh_frozen  trains on kernels freshly sampled from the unchanged base
 *                 each round, as many examples as self has that round;
 *   round0        retrains on round 0's data every round.
 *
 * Every arm retrains from the base each round (ReST-EM) unless --continue.
 * Training and sampling are engine calls (engine.h), each a journaled unit;
 * grading reuses round.h (one grade per task and source hash over the run),
 * the split, the output folder and the scorecard base come from procrun.h.
 * Every arm draws the same generations per round: k per train task and k per
 * held-out task. */
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "extract.h"
#include "metrics.h"
#include "procrun.h"
#include "prompt.h"
#include "scorecard.h"
#include "track.h"
#include "trainee.h"

#define N_ARMS 3
#define SELF 0
#define FRESH 1
#define ROUND0 2
#define REPLY_LINE_CAP ((size_t)64 << 20)
static const char *const arms[N_ARMS] = {"self", "fresh_frozen", "round0"};

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
	double *c;	  /* per task mean score over k samples */
	double *ok;	  /* per task fraction ok */
	int *solved;	  /* per task: some sample ok */
	int n_examples;	  /* SFT examples trained on this round */
	double diversity; /* distinct 4-gram share of the SFT completions, -1 none */
	struct round_budget used;
};

struct rtrack {
	const struct rsi_opts *o;
	struct procrun r;
	struct engine en;
	const char *lang;
	char *dir_engine, *dir_models, *dir_data;
	int R, nh, nt;
	struct arm_round *ar[N_ARMS]; /* [round], round 0 shared */
	json_t *d0;		      /* round 0's verified train examples */
	json_t *acc_self;	      /* self's accumulated verified examples */
	int engine_calls_run;
};

static void fail(const struct rtrack *t, const char *fmt, const char *msg)
{
	procrun_fail(&t->r, fmt, msg);
}

/* ---- prompts and replies ---------------------------------------------------- */

static char *prompt_for(const struct rtrack *t, const struct procrun_split *s, int i)
{
	if (!strcmp(t->o->prompt_style, "short"))
		return xasprintf("task: %s\n### opencl\n", s->t[i]->name);
	return xstrdup(s->prompts[i]);
}

/* The prompts of split s (prefix "train/" or "heldout/") appended to arr. */
static void add_prompts(const struct rtrack *t, json_t *arr, const struct procrun_split *s,
			const char *prefix)
{
	for (int i = 0; i < s->n; i++) {
		char *id = xasprintf("%s/%d", prefix, i);
		char *p = prompt_for(t, s, i);
		json_array_append_new(arr, json_pack("{s:s,s:s}", "id", id, "text", p));
		free(id);
		free(p);
	}
}

/* Scores of one sample call's replies: heldout per-task sums into hc/hok/hs
 * (may be NULL), verified train replies appended to ver as
 * {task, prompt, completion, hash}. */
struct graded {
	double *hc, *hok;
	int *hs;
	json_t *ver;
	struct round_budget used;
};

static int grade_replies(struct rtrack *t, const char *path, struct graded *gr, struct ka_err *e)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return ka_err_set(e, "cannot read the replies %s", path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	while (!rc && (len = getline(&line, &cap, f)) > 0) {
		if ((size_t)len > REPLY_LINE_CAP) {
			rc = ka_err_set(e, "%s: a reply line over the cap", path);
			break;
		}
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		const char *id = json_string_value(json_object_get(o, "id"));
		const char *text = json_string_value(json_object_get(o, "text"));
		if (!id || !text) {
			json_decref(o);
			rc = ka_err_set(e, "%s: a line without id and text", path);
			break;
		}
		int train = !strncmp(id, "train/", 6);
		const struct procrun_split *s = train ? &t->r.train : &t->r.heldout;
		int i = atoi(strchr(id, '/') + 1);
		if (i < 0 || i >= s->n) {
			json_decref(o);
			rc = ka_err_set(e, "%s: unknown prompt id '%s'", path, id);
			break;
		}
		gr->used.requests++;
		gr->used.tokens += json_integer_value(json_object_get(o, "tokens_in")) +
				   json_integer_value(json_object_get(o, "tokens_out"));
		char *code = extract_code(text, t->lang);
		struct round_grade g;
		memset(&g, 0, sizeof g);
		int fresh = 0;
		if (code) {
			gr->used.checks++;
			if (round_grade_code(t->r.d.j, t->r.gs, t->r.start_id, s->t[i], code, &g,
					     &fresh, e))
				rc = -1;
		}
		if (!rc && !train && gr->hc) {
			gr->hc[i] += g.score / t->o->k;
			gr->hok[i] += (g.ok ? 1.0 : 0.0) / t->o->k;
			gr->hs[i] |= g.ok;
		}
		if (!rc && train && g.ok && gr->ver) {
			char h[17];
			snprintf(h, sizeof h, "%016llx",
				 (unsigned long long)util_hash64(code, strlen(code), 1));
			char *p = prompt_for(t, s, i);
			json_array_append_new(gr->ver, json_pack("{s:s,s:s,s:s,s:s}", "task",
								 s->t[i]->name, "prompt", p,
								 "completion", text, "hash", h));
			free(p);
		}
		round_grade_free(&g);
		free(code);
		json_decref(o);
	}
	free(line);
	fclose(f);
	return rc;
}

/* ---- engine calls ----------------------------------------------------------- */

/* Sample model on the held-out prompts (heldout) and/or the train prompts
 * (train) as unit key; grades the replies into gr. */
static int sample(struct rtrack *t, const char *key, const char *model, int heldout, int train,
		  int64_t seed, struct graded *gr, struct ka_err *e)
{
	const struct rsi_opts *o = t->o;
	json_t *prompts = json_array();
	if (heldout)
		add_prompts(t, prompts, &t->r.heldout, "heldout");
	if (train)
		add_prompts(t, prompts, &t->r.train, "train");
	char sn[ROUND_KEY_MAX];
	snprintf(sn, sizeof sn, "%s", key);
	for (char *p = sn; *p; p++)
		if (*p == '/')
			*p = '_';
	char *out = xasprintf("%s/%s.jsonl", t->dir_data, sn);
	json_t *m = json_pack("{s:s,s:s,s:o,s:i,s:f,s:i,s:I,s:s}", "op", "sample", "model", model,
			      "prompts", prompts, "k", o->k, "temperature", o->p.temperature,
			      "max_tokens", o->p.max_tokens, "seed", (json_int_t)seed, "out", out);
	const char *outs[] = {out, NULL};
	json_t *res = NULL;
	int ran = 0;
	int rc = engine_call(&t->en, t->r.d.j, key, t->dir_engine, m, NULL, outs, &res, &ran, e);
	t->engine_calls_run += ran;
	if (!rc)
		rc = grade_replies(t, out, gr, e);
	if (!rc && !o->p.quiet)
		fprintf(stderr, "ka: %s: %s\n", key, ran ? "sampled" : "journaled");
	json_decref(m);
	json_decref(res);
	free(out);
	return rc;
}

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
	char *exp = xasprintf("%s/r%d_%s_sft.jsonl", t->dir_data, round, arms[arm]);
	char *out = xasprintf("%s/%s/r%d", t->dir_models, arms[arm], round);
	*model = NULL;
	int rc = -1;
	json_t *res = NULL, *m = NULL;
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
	m = json_pack("{s:s,s:s,s:s,s:{s:s,s:i,s:f,s:i},s:I,s:s}", "op", "train", "base", from,
		      "examples", exp, "hyper", "method", o->finetune, "epochs", o->epochs, "lr",
		      o->lr, "batch", o->batch, "seed",
		      (json_int_t)(o->p.seed + 7919 * round + 101 * arm), "out", out);
	const char *ins[] = {exp, NULL}, *outs[] = {out, NULL};
	int ran = 0;
	if (engine_call(&t->en, t->r.d.j, key, t->dir_engine, m, ins, outs, &res, &ran, e))
		goto out;
	t->engine_calls_run += ran;
	if (!o->p.quiet)
		fprintf(stderr, "ka: %s: %s on %zu examples (%s)\n", key,
			ran ? "trained" : "journaled", json_array_size(ex),
			json_string_value(json_object_get(res, "method")));
	*model = out;
	out = NULL;
	rc = 0;
out:
	json_decref(m);
	json_decref(res);
	free(exp);
	free(out);
	return rc;
}

/* ---- the rounds --------------------------------------------------------------- */

static struct arm_round *new_rounds(int R, int nh)
{
	struct arm_round *a = xcalloc((size_t)R + 1, sizeof *a);
	for (int r = 0; r <= R; r++) {
		a[r].c = xcalloc((size_t)nh + 1, sizeof(double));
		a[r].ok = xcalloc((size_t)nh + 1, sizeof(double));
		a[r].solved = xcalloc((size_t)nh + 1, sizeof(int));
		a[r].diversity = -1;
	}
	return a;
}

static struct graded graded_of(struct arm_round *a, json_t *ver)
{
	struct graded g = {a ? a->c : NULL, a ? a->ok : NULL, a ? a->solved : NULL, ver, {0, 0, 0}};
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

static int run_rounds(struct rtrack *t, struct ka_err *e)
{
	const struct rsi_opts *o = t->o;
	const char *base = o->model;
	char key[ROUND_KEY_MAX];
	int64_t seed = o->p.seed;
	/* round 0: the base on held-out (shared by every arm) and train */
	t->d0 = json_array();
	struct graded g0 = graded_of(&t->ar[SELF][0], t->d0);
	round_key(key, sizeof key, 0, "base", "sample", NULL);
	if (sample(t, key, base, 1, 1, seed, &g0, e))
		return -1;
	for (int a = 0; a < N_ARMS; a++) {
		if (a != SELF) {
			memcpy(t->ar[a][0].c, t->ar[SELF][0].c, sizeof(double) * (size_t)t->nh);
			memcpy(t->ar[a][0].ok, t->ar[SELF][0].ok, sizeof(double) * (size_t)t->nh);
			memcpy(t->ar[a][0].solved, t->ar[SELF][0].solved,
			       sizeof(int) * (size_t)t->nh);
		}
		t->ar[a][0].used = g0.used;
	}
	t->acc_self = json_deep_copy(t->d0);
	char *prev[N_ARMS] = {NULL, NULL, NULL};
	int rc = 0;
	for (int r = 1; r <= t->R && !rc; r++) {
		for (int a = 0; a < N_ARMS && !rc; a++) {
			struct arm_round *ar = &t->ar[a][r];
			json_t *ex = NULL, *fresh_ver = NULL;
			struct round_budget extra = {0, 0, 0};
			if (a == SELF) {
				ex = capped(t, t->acc_self);
			} else if (a == FRESH) {
				fresh_ver = json_array();
				struct graded gf = graded_of(NULL, fresh_ver);
				round_key(key, sizeof key, r, arms[a], "base_sample", NULL);
				if (sample(t, key, base, 0, 1, seed + 1000 * r + 500, &gf, e)) {
					json_decref(fresh_ver);
					rc = -1;
					break;
				}
				extra = gf.used;
				json_t *pool = capped(t, fresh_ver);
				ex = take_n(pool, (size_t)t->ar[SELF][r].n_examples);
				json_decref(pool);
			} else {
				ex = capped(t, t->d0);
			}
			json_decref(fresh_ver);
			ar->n_examples = (int)json_array_size(ex);
			ar->diversity = trainee_diversity(ex);
			const char *from = o->cont && prev[a] ? prev[a] : base;
			char *model = NULL;
			rc = train(t, r, a, ex, from, &model, e);
			json_decref(ex);
			if (rc)
				break;
			free(prev[a]);
			prev[a] = model;
			json_t *ver = json_array();
			struct graded gs = graded_of(ar, ver);
			round_key(key, sizeof key, r, arms[a], "sample", NULL);
			/* fresh_frozen drew its train generations from the base above */
			rc = sample(t, key, model, 1, a != FRESH, seed + 1000 * r + a, &gs, e);
			if (!rc && a == SELF) {
				size_t i;
				for (i = 0; i < json_array_size(ver); i++)
					json_array_append(t->acc_self, json_array_get(ver, i));
			}
			json_decref(ver);
			ar->used = gs.used;
			round_budget_add(&ar->used, &extra);
		}
	}
	for (int a = 0; a < N_ARMS; a++)
		free(prev[a]);
	return rc;
}

/* ---- the scorecard ------------------------------------------------------------- */

static double retention(const struct rtrack *t, int a, int r)
{
	int n0 = 0, kept = 0;
	for (int i = 0; i < t->nh; i++)
		if (t->ar[SELF][0].solved[i]) {
			n0++;
			kept += t->ar[a][r].solved[i];
		}
	return n0 ? (double)kept / n0 : -1;
}

static json_t *num_or_null(double x)
{
	return x < 0 ? json_null() : json_real(x);
}

static struct round_budget allowance(const struct rtrack *t)
{
	/* per arm: round 0's shared draw, then k per train and held-out task a round */
	struct round_budget b;
	int64_t per_round = (int64_t)t->o->k * (t->nh + t->nt);
	b.requests = per_round * (t->R + 1);
	b.checks = b.requests;
	b.tokens = b.requests * t->o->p.max_tokens;
	return b;
}

static json_t *build_scorecard(struct rtrack *t)
{
	const struct rsi_opts *o = t->o;
	int nh = t->nh, R = t->R;
	uint64_t s0 = (uint64_t)o->p.seed;
	json_t *sc = procrun_scorecard_base(&t->r, "weight_rsi");
	const char *slash = strrchr(o->model, '/');
	const char *name = slash && slash[1] ? slash + 1 : o->model;
	json_object_set_new(sc, "model",
			    json_pack("{s:s,s:s,s:s,s:s}", "spec", o->model, "backend", t->en.name,
				      "name", name, "kind", "open"));
	json_object_set_new(sc, "k", json_integer(o->k));
	json_t *rows = json_array();
	struct metrics_figure cf[N_ARMS], okf[N_ARMS];
	struct round_budget used[N_ARMS];
	memset(used, 0, sizeof used);
	for (int r = 0; r <= R; r++)
		for (int a = 0; a < N_ARMS; a++) {
			struct arm_round *ar = &t->ar[a][r];
			/* round 0 is one evaluation: the same seed gives every arm the same CI */
			uint64_t sd = s0 + 31 * (uint64_t)r + (r ? (uint64_t)a : 0);
			round_mean_figure(ar->c, nh, sd, &cf[a]);
			round_mean_figure(ar->ok, nh, sd + 7, &okf[a]);
			round_budget_add(&used[a], &ar->used);
			json_t *row = json_pack("{s:i,s:s,s:o,s:o,s:o,s:o,s:i,s:o}", "round", r,
						"arm", arms[a], "c", scorecard_figure_json(&cf[a]),
						"correct", scorecard_figure_json(&okf[a]),
						"retention", num_or_null(retention(t, a, r)),
						"diversity", num_or_null(r ? ar->diversity : -1),
						"n_examples", ar->n_examples, "budget_used",
						round_budget_json(&ar->used));
			if (a != FRESH) {
				struct metrics_figure d;
				round_paired_diff(ar->c, t->ar[FRESH][r].c, nh, sd + 11, &d);
				json_object_set_new(row, "c_minus_fresh",
						    scorecard_figure_json(&d));
			}
			json_array_append_new(rows, row);
		}
	json_object_set_new(sc, "rounds", rows);
	struct metrics_figure c0, dsf, dsr, dvf;
	round_mean_figure(t->ar[SELF][0].c, nh, s0, &c0);
	round_paired_diff(t->ar[SELF][R].c, t->ar[FRESH][R].c, nh, s0 + 1001, &dsf);
	round_paired_diff(t->ar[SELF][R].c, t->ar[ROUND0][R].c, nh, s0 + 1002, &dsr);
	round_paired_diff(t->ar[SELF][R].c, t->ar[SELF][0].c, nh, s0 + 1003, &dvf);
	enum metrics_verdict v = metrics_rsi_verdict(&dsf, dsr.value > 0);
	struct round_budget allow = allowance(t);
	json_t *used_j = json_object();
	for (int a = 0; a < N_ARMS; a++)
		json_object_set_new(used_j, arms[a], round_budget_json(&used[a]));
	json_t *sum = json_pack(
		"{s:i,s:o,s:o,s:o,s:n,s:o,s:o,s:o,s:s,s:s,s:o,s:o,s:i,s:i,s:s,s:s,s:b,s:i}",
		"rounds", R, "c0", scorecard_figure_json(&c0), "c_final",
		scorecard_figure_json(&cf[SELF]), "correct", scorecard_figure_json(&okf[SELF]),
		"compiled_x", "delta_vs_frozen", scorecard_figure_json(&dvf), "self_minus_fresh",
		scorecard_figure_json(&dsf), "self_minus_round0", scorecard_figure_json(&dsr),
		"verdict", metrics_verdict_name(v), "verdict_rule", RSI_VERDICT_RULE,
		"budget_allowed", round_budget_json(&allow), "budget_used", used_j, "n_train",
		t->nt, "n_heldout", nh, "engine", t->en.name, "finetune", o->finetune,
		"continued_training", o->cont, "per_task_cap", o->per_task_cap);
	json_object_set_new(sum, "baseline", json_string("compiled"));
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
		}
		free(t->ar[a]);
	}
	json_decref(t->d0);
	json_decref(t->acc_self);
	free(t->dir_engine);
	free(t->dir_models);
	free(t->dir_data);
	engine_free(&t->en);
	procrun_free(&t->r);
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
	if (procrun_prepare(&t.r, &o->p, "rsi"))
		goto out;
	if (engine_find(o->engine, &t.en, &e)) {
		fail(&t, "%s", e.msg);
		goto out;
	}
	t.en.timeout_s = o->engine_timeout_s;
	t.lang = prompt_extract_lang(t.r.target);
	t.nh = t.r.heldout.n;
	t.nt = t.r.train.n;
	struct round_budget allow[N_ARMS];
	for (int a = 0; a < N_ARMS; a++)
		allow[a] = allowance(&t);
	if (round_budgets_equal(allow, arms, N_ARMS, &e)) {
		fail(&t, "%s", e.msg);
		goto out;
	}
	json_t *args = procrun_identity(&t.r);
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
	rc = procrun_open(&t.r, args);
	json_decref(args);
	if (rc)
		goto out;
	rc = KA_EXIT_FAIL;
	t.dir_engine = xasprintf("%s/engine", o->p.out);
	t.dir_models = xasprintf("%s/models", o->p.out);
	t.dir_data = xasprintf("%s/data", o->p.out);
	if (util_mkdirs(t.dir_engine, &e) || util_mkdirs(t.dir_data, &e) ||
	    util_mkdirs(t.dir_models, &e)) {
		fail(&t, "%s", e.msg);
		goto out;
	}
	for (int a = 0; a < N_ARMS; a++)
		t.ar[a] = new_rounds(t.R, t.nh);
	if (run_rounds(&t, &e)) {
		fail(&t, "%s", e.msg);
		goto out;
	}
	json_t *sc = build_scorecard(&t);
	char *path = NULL;
	if (procrun_write_scorecard(&t.r, sc, &path) == 0) {
		printf("scorecard: %s\n", path);
		if (!o->p.quiet) {
			const json_t *s = json_object_get(sc, "summary");
			struct metrics_figure f;
			scorecard_figure_get(json_object_get(s, "c0"), &f);
			printf("  C0 %.3f", f.value);
			scorecard_figure_get(json_object_get(s, "c_final"), &f);
			printf("  final %.3f", f.value);
			scorecard_figure_get(json_object_get(s, "self_minus_fresh"), &f);
			printf("  self - fresh_frozen %+.3f [%+.3f, %+.3f]  %s\n", f.value, f.lo,
			       f.hi, json_string_value(json_object_get(s, "verdict")));
			printf("  engine calls run by this process: %d\n", t.engine_calls_run);
		}
		rc = KA_EXIT_OK;
	}
	free(path);
	json_decref(sc);
out:
	rt_free(&t);
	return rc;
}
