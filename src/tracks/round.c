/* round.c: the split, budgets, journaled units, cached grades and paired
 * statistics shared by the RSI tracks (see round.h).
 *
 * Units and grades live in the run journal's grades table under keys no
 * sample of the capability track can have ("r0/self/heldout/x" with sample
 * -1 for a unit's outcome, "grade/<task>/<hash>" with sample 0 for a grade):
 * one journal per output folder, composite keys, no schema of its own. */
#include "round.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rundir.h"
#include "stats.h"

#define UNIT_SAMPLE (-1)

const char ROUND_VERDICT_RULE[] =
	"The key difference D is the task-level paired difference of held-out means "
	"(self minus frozen at the final round), with a 95% percentile bootstrap CI over "
	"held-out tasks (2000 resamples). 'positive' when the CI of D lies above 0 and "
	"the self arm's final Q is above its round-0 Q; 'negative' when the CI lies below "
	"0; otherwise 'no signal'. Fixed before the run.";

int round_is_train(const char *name, int train_pct)
{
	uint64_t h = util_hash64(name, strlen(name), 0x6b61737031ull);
	return (int)(h % 100) < train_pct;
}

void round_split(const char *const *names, int n, int train_pct, int *is_train)
{
	int n_train = 0;
	for (int i = 0; i < n; i++) {
		is_train[i] = round_is_train(names[i], train_pct);
		n_train += is_train[i];
	}
	if (n < 2 || (n_train > 0 && n_train < n))
		return;
	int pick = 0;
	for (int i = 1; i < n; i++) {
		uint64_t hi = util_hash64(names[i], strlen(names[i]), 0x6b61737031ull);
		uint64_t hp = util_hash64(names[pick], strlen(names[pick]), 0x6b61737031ull);
		if (n_train == 0 ? hi < hp : hi > hp)
			pick = i;
	}
	is_train[pick] = n_train == 0;
}

int round_check_disjoint(const char *const *train, int n_train, const char *const *heldout,
			 int n_heldout, struct ka_err *e)
{
	for (int i = 0; i < n_train; i++)
		for (int k = 0; k < n_heldout; k++)
			if (!strcmp(train[i], heldout[k]))
				return ka_err_set(e,
						  "task '%s' is in both the train and the held-out "
						  "split (the train split is never evaluated as "
						  "held-out)",
						  train[i]);
	return 0;
}

void round_budget_add(struct round_budget *a, const struct round_budget *b)
{
	a->requests += b->requests;
	a->checks += b->checks;
	a->tokens += b->tokens;
}

json_t *round_budget_json(const struct round_budget *b)
{
	return json_pack("{s:I,s:I,s:I}", "requests", (json_int_t)b->requests, "checks",
			 (json_int_t)b->checks, "tokens", (json_int_t)b->tokens);
}

/* Relative difference of two allowances (0 when both are 0). */
static double rel_diff(int64_t a, int64_t b)
{
	int64_t hi = a > b ? a : b, lo = a > b ? b : a;
	return hi == 0 ? 0 : (double)(hi - lo) / (double)hi;
}

int round_budgets_equal(const struct round_budget *allow, const char *const *arms, int n,
			struct ka_err *e)
{
	for (int i = 1; i < n; i++) {
		static const char *const what[] = {"requests", "checks", "tokens"};
		int64_t a[3] = {allow[0].requests, allow[0].checks, allow[0].tokens};
		int64_t b[3] = {allow[i].requests, allow[i].checks, allow[i].tokens};
		for (int q = 0; q < 3; q++)
			if (rel_diff(a[q], b[q]) > ROUND_BUDGET_TOL)
				return ka_err_set(
					e,
					"arms '%s' and '%s' differ by %.1f%% in %s (%lld vs "
					"%lld; at most %.0f%% is allowed): refused",
					arms[0], arms[i], 100 * rel_diff(a[q], b[q]), what[q],
					(long long)a[q], (long long)b[q], 100 * ROUND_BUDGET_TOL);
	}
	return 0;
}

void round_key(char *buf, size_t cap, int round, const char *arm, const char *phase,
	       const char *task)
{
	if (task)
		snprintf(buf, cap, "r%d/%s/%s/%s", round, arm, phase, task);
	else
		snprintf(buf, cap, "r%d/%s/%s", round, arm, phase);
}

int round_unit_get(struct journal *j, const char *key, json_t **out, struct ka_err *e)
{
	char *res = NULL;
	*out = NULL;
	int rc = journal_get_grade(j, key, UNIT_SAMPLE, NULL, NULL, &res, e);
	if (rc)
		return rc;
	json_error_t je;
	*out = json_loads(res, 0, &je);
	free(res);
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return ka_err_set(e, "journal: unit %s: outcome is not a JSON object", key);
	}
	return 0;
}

int round_unit_put(struct journal *j, const char *key, const json_t *outcome, struct ka_err *e)
{
	char *s = json_dumps(outcome, JSON_COMPACT | JSON_SORT_KEYS);
	if (!s)
		return ka_err_set(e, "unit %s: cannot encode its outcome", key);
	int rc = journal_put_grade(j, key, UNIT_SAMPLE, "unit", "", s, 0, 0, e);
	free(s);
	return rc;
}

int round_generate(struct journal *j, struct model *m, const char *key, int idx, const char *prompt,
		   const char *lang, struct journal_reply *out, int *sent, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	*sent = 0;
	int rc = journal_get_reply(j, key, idx, out, e);
	if (rc < 0)
		return -1;
	if (rc == 0 && out->ok)
		return 0;
	if (rc == 0)
		journal_reply_free(out);
	char ph[17];
	snprintf(ph, sizeof ph, "%016llx",
		 (unsigned long long)util_hash64(prompt, strlen(prompt), 0));
	if (journal_request(j, key, idx, ph, idx, e))
		return -1;
	struct model_request req = {.task = key, .sample = idx, .prompt = prompt, .lang = lang};
	struct model_reply rep;
	memset(&rep, 0, sizeof rep);
	if (model_complete(m, &req, &rep)) {
		model_reply_free(&rep);
		return ka_err_set(e, "the model backend cannot work (%s)", model_backend_name(m));
	}
	struct journal_reply jr = {
		.ok = rep.ok,
		.text = rep.text,
		.code = rep.code,
		.lang = (char *)(lang ? lang : ""),
		.finish = rep.finish,
		.error = rep.error,
		.seed = rep.seed,
		.in_tokens = rep.in_tokens,
		.out_tokens = rep.out_tokens,
		.cost_usd = rep.cost_usd,
		.latency_s = rep.latency_s,
		.cached = rep.cached,
		.http_status = rep.http_status,
		.attempts = rep.attempts,
	};
	rc = journal_put_reply(j, key, idx, &jr, e);
	*sent = 1;
	if (!rc) {
		out->ok = rep.ok;
		out->text = rep.text ? xasprintf("%s", rep.text) : NULL;
		out->code = rep.code ? xasprintf("%s", rep.code) : NULL;
		out->error = xasprintf("%s", rep.error);
		out->finish = xasprintf("%s", rep.finish);
		out->in_tokens = rep.in_tokens;
		out->out_tokens = rep.out_tokens;
		out->cost_usd = rep.cost_usd;
		out->seed = rep.seed;
	}
	model_reply_free(&rep);
	return rc;
}

void round_grade_free(struct round_grade *g)
{
	free(g->detail);
	g->detail = NULL;
}

/* A measured speedup of the grader as the tracks keep it (present = 0 when
 * not measured), its CI widened to contain the median. */
static void speedup_of(const struct grade_figure *f, struct metrics_speedup *out)
{
	memset(out, 0, sizeof *out);
	if (!f->valid || !isfinite(f->median) || f->median <= 0)
		return;
	out->present = 1;
	out->median = f->median;
	out->lo = isfinite(f->lo) && f->lo > 0 && f->lo <= f->median ? f->lo : f->median;
	out->hi = isfinite(f->hi) && f->hi >= f->median ? f->hi : f->median;
}

static void speedup_put(json_t *o, const char *key, const struct metrics_speedup *sp)
{
	if (sp->present)
		json_object_set_new(o, key,
				    json_pack("{s:f,s:f,s:f}", "median", sp->median, "lo", sp->lo,
					      "hi", sp->hi));
}

static void speedup_get(const json_t *o, const char *key, struct metrics_speedup *sp)
{
	const json_t *s = json_object_get(o, key);
	if (json_is_object(s)) {
		sp->present = 1;
		sp->median = json_number_value(json_object_get(s, "median"));
		sp->lo = json_number_value(json_object_get(s, "lo"));
		sp->hi = json_number_value(json_object_get(s, "hi"));
	}
}

/* The compact record of a grade journaled under grade/<task>/<hash>. */
static json_t *grade_record(const struct round_grade *g)
{
	json_t *o = json_pack("{s:s,s:b,s:f,s:s}", "verdict", g->verdict, "ok", g->ok, "score",
			      g->score, "phase", g->phase);
	speedup_put(o, "speedup_eager", &g->eager);
	speedup_put(o, "speedup_compiled", &g->compiled);
	return o;
}

static void grade_from_record(const char *verdict, const char *detail, const json_t *o,
			      struct round_grade *g)
{
	snprintf(g->verdict, sizeof g->verdict, "%s", verdict);
	g->ok = json_is_true(json_object_get(o, "ok"));
	g->score = json_number_value(json_object_get(o, "score"));
	const char *ph = json_string_value(json_object_get(o, "phase"));
	snprintf(g->phase, sizeof g->phase, "%s", ph ? ph : "");
	speedup_get(o, "speedup_eager", &g->eager);
	speedup_get(o, "speedup_compiled", &g->compiled);
	g->detail = xasprintf("%s", detail ? detail : "");
}

int round_grade_code(struct journal *j, struct grade_session *s, int start_id,
		     const struct ka_task *t, const char *code, struct round_grade *g, int *fresh,
		     struct ka_err *e)
{
	memset(g, 0, sizeof *g);
	*fresh = 0;
	const char *src = code ? code : "";
	char key[ROUND_KEY_MAX];
	snprintf(key, sizeof key, "grade/%s/%016llx", t->name,
		 (unsigned long long)util_hash64(src, strlen(src), 0));
	char *verdict = NULL, *detail = NULL, *res = NULL;
	int rc = journal_get_grade(j, key, 0, &verdict, &detail, &res, e);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		json_t *o = json_loads(res, 0, NULL);
		grade_from_record(verdict, detail, o, g);
		json_decref(o);
		free(verdict);
		free(detail);
		free(res);
		return 0;
	}
	if (rundir_stop_signal())
		return ka_err_set(e,
				  "stopped by signal %d before grading %s; the same command "
				  "resumes the run",
				  rundir_stop_signal(), t->name);
	struct grade_result r;
	memset(&r, 0, sizeof r);
	int x = grade_candidate(s, t, src, strlen(src), NULL, &r, e);
	if (x) { /* -2: the task is broken, nothing to journal for the sample */
		grade_result_free(&r);
		return x;
	}
	if (!rundir_grade_stands(r.verdict == VERDICT_OK)) {
		grade_result_free(&r);
		return ka_err_set(e,
				  "stopped by signal %d while grading %s (not journaled); "
				  "the same command resumes the run",
				  rundir_stop_signal(), t->name);
	}
	*fresh = 1;
	snprintf(g->verdict, sizeof g->verdict, "%s", verdict_name(r.verdict));
	g->ok = r.verdict == VERDICT_OK;
	snprintf(g->phase, sizeof g->phase, "%s", r.phase);
	if (g->ok) {
		speedup_of(&r.speedup_eager, &g->eager);
		speedup_of(&r.speedup_compiled, &g->compiled);
	}
	g->score = metrics_score(g->ok, g->eager.present ? g->eager.median : NAN,
				 g->eager.present ? g->eager.lo : NAN);
	g->detail = xasprintf("%s", r.detail);
	grade_result_free(&r);
	json_t *rec = grade_record(g);
	char *txt = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(rec);
	rc = journal_put_grade(j, key, 0, g->verdict, g->detail, txt, start_id, 0, e);
	free(txt);
	return rc;
}

void round_mean_figure(const double *x, int n, uint64_t seed, struct metrics_figure *out)
{
	memset(out, 0, sizeof *out);
	if (n <= 0)
		return;
	double mean;
	struct ci c = stats_mean_ci(x, (size_t)n, ROUND_BOOT_REPS, seed, &mean);
	out->defined = 1;
	out->value = mean;
	out->lo = isfinite(c.lo) && c.lo <= mean ? c.lo : mean;
	out->hi = isfinite(c.hi) && c.hi >= mean ? c.hi : mean;
}

void round_paired_diff(const double *a, const double *b, int n, uint64_t seed,
		       struct metrics_figure *out)
{
	memset(out, 0, sizeof *out);
	if (n <= 0)
		return;
	double *d = xmalloc((size_t)n * sizeof *d);
	double sa = 0, sb = 0;
	for (int i = 0; i < n; i++) {
		d[i] = a[i] - b[i];
		sa += a[i];
		sb += b[i];
	}
	struct metrics_figure f;
	round_mean_figure(d, n, seed, &f);
	free(d);
	/* The value is exactly the difference of the two means, as the
	 * scorecard check recomputes it. */
	double v = sa / n - sb / n;
	out->defined = 1;
	out->value = v;
	out->lo = f.lo <= v ? f.lo : v;
	out->hi = f.hi >= v ? f.hi : v;
}
