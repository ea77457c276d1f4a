/* metrics.c: per-sample scores and per-tier aggregates (see metrics.h). Every
 * aggregate is a mean over tasks of a per-task value, with the CI from
 * stats_grouped_mean_ci resampling tasks under one fixed seed, so the same
 * samples give bit-identical figures wherever they are recomputed (the
 * capability track writing a scorecard, `ka scorecard check` reading it). */
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

const double metrics_p_values[METRICS_N_P] = {1.0, 1.5, 2.0};
const char *const metrics_p_names[METRICS_N_P] = {"1", "1.5", "2"};

double metrics_score(int ok, double speedup_median, double speedup_lo)
{
	if (!ok)
		return 0;
	if (!(speedup_lo > 1) || !(speedup_median > 0) || !isfinite(speedup_median))
		return 0.5;
	double g = log2(speedup_median) / 2;
	if (g > 1)
		g = 1;
	if (g < 0) /* lo > 1 implies median > 1; guard anyway */
		g = 0;
	return 0.5 + 0.5 * g;
}

double metrics_sample_score(const struct metrics_sample *s)
{
	if (!s->eager.present)
		return metrics_score(s->ok, NAN, NAN);
	return metrics_score(s->ok, s->eager.median, s->eager.lo);
}

double metrics_pass_at_k(int n, int c, int k)
{
	if (n <= 0)
		return 0;
	if (k > n)
		k = n;
	if (n - c < k)
		return 1;
	/* C(n-c,k)/C(n,k) = prod_{i=n-c+1}^{n} (1 - k/i): stable for large n. */
	double prod = 1;
	for (int i = n - c + 1; i <= n; i++)
		prod *= 1.0 - (double)k / (double)i;
	return 1 - prod;
}

/* Scratch for one aggregate: the filtered tasks as groups of samples. */
struct groups {
	const struct metrics_task **t;
	size_t n;
	size_t *off, *cnt;
	double *v; /* one value per sample (or per task) */
	size_t total;
};

static void figure_from(struct groups *g, struct metrics_figure *f, int log_scale)
{
	double mean;
	struct ci ci = stats_grouped_mean_ci(g->v, g->off, g->cnt, g->n, METRICS_BOOT_REPS,
					     METRICS_BOOT_SEED, &mean);
	if (isnan(mean)) {
		memset(f, 0, sizeof *f);
		return;
	}
	f->defined = 1;
	f->value = log_scale ? exp(mean) : mean;
	f->lo = log_scale ? exp(ci.lo) : ci.lo;
	f->hi = log_scale ? exp(ci.hi) : ci.hi;
}

/* Fill g->v with an indicator per sample (every sample counts). */
enum ind { IND_OK, IND_FAST_EAGER, IND_FAST_COMPILED, IND_SCORE };

static void fill_indicator(struct groups *g, enum ind what, double p)
{
	size_t k = 0;
	for (size_t i = 0; i < g->n; i++) {
		g->off[i] = k;
		g->cnt[i] = (size_t)g->t[i]->n_samples;
		for (int j = 0; j < g->t[i]->n_samples; j++) {
			const struct metrics_sample *s = &g->t[i]->samples[j];
			double x = 0;
			switch (what) {
			case IND_OK: x = s->ok ? 1 : 0; break;
			case IND_FAST_EAGER:
				x = s->ok && s->eager.present && s->eager.lo > p;
				break;
			case IND_FAST_COMPILED:
				x = s->ok && s->compiled.present && s->compiled.lo > p;
				break;
			case IND_SCORE: x = metrics_sample_score(s); break;
			}
			g->v[k++] = x;
		}
	}
}

/* Log speedups of measured ok samples only: a task without one is empty. */
static void fill_log_speedup(struct groups *g, int compiled)
{
	size_t k = 0;
	for (size_t i = 0; i < g->n; i++) {
		g->off[i] = k;
		for (int j = 0; j < g->t[i]->n_samples; j++) {
			const struct metrics_sample *s = &g->t[i]->samples[j];
			const struct metrics_speedup *sp = compiled ? &s->compiled : &s->eager;
			if (s->ok && sp->present && sp->median > 0)
				g->v[k++] = log(sp->median);
		}
		g->cnt[i] = k - g->off[i];
	}
}

void metrics_aggregate(const struct metrics_task *tasks, int n, const char *tier_filter, int k,
		       struct metrics_agg *out)
{
	memset(out, 0, sizeof *out);
	struct groups g = {0};
	g.t = xcalloc((size_t)(n > 0 ? n : 1), sizeof *g.t);
	for (int i = 0; i < n; i++) {
		if (tier_filter && (!tasks[i].tier || strcmp(tasks[i].tier, tier_filter)))
			continue;
		g.t[g.n++] = &tasks[i];
		g.total += (size_t)(tasks[i].n_samples > 0 ? tasks[i].n_samples : 0);
	}
	out->n_tasks = (int)g.n;
	out->n_samples = (int)g.total;
	size_t nn = g.n ? g.n : 1;
	g.off = xcalloc(nn, sizeof *g.off);
	g.cnt = xcalloc(nn, sizeof *g.cnt);
	g.v = xcalloc((g.total > g.n ? g.total : g.n) + 1, sizeof *g.v);

	fill_indicator(&g, IND_OK, 0);
	figure_from(&g, &out->correct, 0);
	fill_indicator(&g, IND_FAST_EAGER, 1.0);
	figure_from(&g, &out->fast, 0);
	fill_indicator(&g, IND_FAST_COMPILED, 1.0);
	figure_from(&g, &out->fast_compiled, 0);
	/* p = 1 is fast itself (metrics_p_values[0] == 1): same seed, same
	 * figure, no second bootstrap. */
	out->fast_p[0] = out->fast;
	out->fast_p_compiled[0] = out->fast_compiled;
	for (int p = 1; p < METRICS_N_P; p++) {
		fill_indicator(&g, IND_FAST_EAGER, metrics_p_values[p]);
		figure_from(&g, &out->fast_p[p], 0);
		fill_indicator(&g, IND_FAST_COMPILED, metrics_p_values[p]);
		figure_from(&g, &out->fast_p_compiled[p], 0);
	}
	fill_indicator(&g, IND_SCORE, 0);
	figure_from(&g, &out->mean_c, 0);

	/* pass@k: one value per task; tasks without samples take no part. */
	for (size_t i = 0; i < g.n; i++) {
		int c = 0;
		for (int j = 0; j < g.t[i]->n_samples; j++)
			c += g.t[i]->samples[j].ok != 0;
		g.off[i] = i;
		g.cnt[i] = g.t[i]->n_samples > 0;
		g.v[i] = metrics_pass_at_k(g.t[i]->n_samples, c, k);
	}
	figure_from(&g, &out->pass_at_k, 0);

	fill_log_speedup(&g, 0);
	figure_from(&g, &out->geomean_speedup, 1);
	fill_log_speedup(&g, 1);
	figure_from(&g, &out->geomean_speedup_compiled, 1);

	free(g.t);
	free(g.off);
	free(g.cnt);
	free(g.v);
}

enum metrics_verdict metrics_rsi_verdict(const struct metrics_figure *diff, int beats_baseline)
{
	if (diff->defined && diff->hi < 0)
		return METRICS_VERDICT_NEGATIVE;
	if (diff->defined && diff->lo > 0 && beats_baseline)
		return METRICS_VERDICT_POSITIVE;
	return METRICS_VERDICT_NO_SIGNAL;
}

static const char *const verdict_names[] = {"positive", "no signal", "negative"};

const char *metrics_verdict_name(enum metrics_verdict v)
{
	return (unsigned)v < 3 ? verdict_names[v] : "?";
}

int metrics_verdict_parse(const char *s, enum metrics_verdict *out)
{
	for (int i = 0; i < 3; i++)
		if (s && !strcmp(s, verdict_names[i])) {
			*out = (enum metrics_verdict)i;
			return 0;
		}
	return -1;
}
