/* stats.c: the statistics of stats.h. Medians and quantiles by sorting a
 * copy; the order-statistic CI of a median from exact binomial tails;
 * percentile bootstrap CIs driven by a splitmix64 stream seeded by the caller
 * (so a CI recomputed from the same data and seed is bit-identical). Nothing
 * here allocates more than a few copies of the caller's arrays, and nothing
 * here knows what the numbers mean. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define STATS_DEFAULT_REPS 1000

/* splitmix64: state advances by the golden gamma, output is the finaliser. */
static uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform index in [0, n) by multiply-high (bias below 2^-64 * n). */
static size_t rng_index(uint64_t *state, size_t n)
{
	return (size_t)(((unsigned __int128)rng_next(state) * n) >> 64);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_inplace(double *x, size_t n)
{
	qsort(x, n, sizeof *x, cmp_double);
	if (n % 2)
		return x[n / 2];
	return 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double stats_median(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double *c = xmalloc(n * sizeof *c);
	memcpy(c, x, n * sizeof *c);
	double m = median_inplace(c, n);
	free(c);
	return m;
}

double stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	if (n == 0)
		return NAN;
	if (q <= 0)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	double frac = pos - (double)i;
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + frac * (sorted[i + 1] - sorted[i]);
}

/* P(Binomial(n, 1/2) <= j), summed in log space so large n does not
 * underflow. */
static double binom_half_cdf(size_t n, size_t j)
{
	double sum = 0, ln2n = (double)n * log(2.0);
	for (size_t i = 0; i <= j && i <= n; i++)
		sum += exp(lgamma((double)n + 1) - lgamma((double)i + 1) -
			   lgamma((double)(n - i) + 1) - ln2n);
	return sum;
}

struct ci stats_median_ci(const double *x, size_t n)
{
	struct ci r = {NAN, NAN};
	if (n == 0)
		return r;
	double *c = xmalloc(n * sizeof *c);
	memcpy(c, x, n * sizeof *c);
	qsort(c, n, sizeof *c, cmp_double);
	/* The CI [x_(j), x_(n-j+1)] (1-based) covers the median with
	 * probability 1 - 2 P(B <= j-1); take the largest j keeping each tail at
	 * most 2.5%. Below n = 6 no j >= 1 qualifies except j = 1 = [min, max]. */
	size_t j = 1;
	if (n >= 6)
		while (j + 1 <= n / 2 && binom_half_cdf(n, j) <= 0.025)
			j++;
	r.lo = c[j - 1];
	r.hi = c[n - j];
	free(c);
	return r;
}

static struct ci percentile_ci(double *reps_v, int reps)
{
	qsort(reps_v, (size_t)reps, sizeof *reps_v, cmp_double);
	struct ci r = {stats_quantile_sorted(reps_v, (size_t)reps, 0.025),
		       stats_quantile_sorted(reps_v, (size_t)reps, 0.975)};
	return r;
}

struct ci stats_ratio_ci(const double *a, size_t na, const double *b, size_t nb, int reps,
			 uint64_t seed)
{
	struct ci r = {NAN, NAN};
	if (na == 0 || nb == 0)
		return r;
	if (reps < 1)
		reps = STATS_DEFAULT_REPS;
	uint64_t st = seed;
	double *ra = xmalloc(na * sizeof *ra), *rb = xmalloc(nb * sizeof *rb);
	double *v = xmalloc((size_t)reps * sizeof *v);
	for (int k = 0; k < reps; k++) {
		for (size_t i = 0; i < na; i++)
			ra[i] = a[rng_index(&st, na)];
		for (size_t i = 0; i < nb; i++)
			rb[i] = b[rng_index(&st, nb)];
		v[k] = median_inplace(ra, na) / median_inplace(rb, nb);
	}
	r = percentile_ci(v, reps);
	free(ra);
	free(rb);
	free(v);
	return r;
}

struct ci stats_grouped_mean_ci(const double *values, const size_t *offsets, const size_t *counts,
				size_t n_groups, int reps, uint64_t seed, double *mean)
{
	/* Groups with no values have no mean: they take no part, neither in the
	 * point estimate nor in the resampling. */
	double *gm = xmalloc((n_groups ? n_groups : 1) * sizeof *gm);
	size_t ng = 0;
	for (size_t g = 0; g < n_groups; g++) {
		if (!counts[g])
			continue;
		double s = 0;
		for (size_t i = 0; i < counts[g]; i++)
			s += values[offsets[g] + i];
		gm[ng++] = s / (double)counts[g];
	}
	/* then the bootstrap of the mean over the group means */
	struct ci r = stats_mean_ci(gm, ng, reps, seed, mean);
	free(gm);
	return r;
}

struct ci stats_mean_ci(const double *x, size_t n, int reps, uint64_t seed, double *mean)
{
	struct ci r = {NAN, NAN};
	if (n == 0) {
		if (mean)
			*mean = NAN;
		return r;
	}
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	if (mean)
		*mean = s / (double)n;
	if (reps < 1)
		reps = STATS_DEFAULT_REPS;
	uint64_t st = seed;
	double *v = xmalloc((size_t)reps * sizeof *v);
	for (int k = 0; k < reps; k++) {
		double t = 0;
		for (size_t i = 0; i < n; i++)
			t += x[rng_index(&st, n)];
		v[k] = t / (double)n;
	}
	r = percentile_ci(v, reps);
	free(v);
	return r;
}

double stats_geomean(const double *x, size_t n)
{
	if (n == 0)
		return 0;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += log(x[i]);
	return exp(s / (double)n);
}
