/* stats.h: the statistics every figure in KernelAscent goes through: median,
 * percentile bootstrap confidence intervals (of a median, of a ratio of
 * medians, of a mean over groups), all with a caller-given seed so results
 * are reproducible. Pure functions over arrays the caller owns. */
#ifndef KA_STATS_H
#define KA_STATS_H

#include <stddef.h>
#include <stdint.h>

struct ci {
	double lo, hi;
};

/* Median of n values (n >= 1); does not modify x. */
double stats_median(const double *x, size_t n);

/* Quantile q in [0,1] by linear interpolation of sorted values. */
double stats_quantile_sorted(const double *sorted, size_t n, double q);

/* 95% CI of the median from the order statistics (binomial, distribution
 * free); for n < 6 the CI is [min, max]. */
struct ci stats_median_ci(const double *x, size_t n);

/* Percentile bootstrap 95% CI of median(a)/median(b) with `reps` resamples. */
struct ci stats_ratio_ci(const double *a, size_t na, const double *b, size_t nb, int reps,
			 uint64_t seed);

/* Percentile bootstrap 95% CI of the mean of per-group means: groups[i] has
 * counts[i] values starting at values + offsets[i]. Resamples groups (tasks),
 * as docs/scorecard.md says. Returns the point estimate in *mean. */
struct ci stats_grouped_mean_ci(const double *values, const size_t *offsets, const size_t *counts,
				size_t n_groups, int reps, uint64_t seed, double *mean);

/* Percentile bootstrap 95% CI of a plain mean (resampling values). */
struct ci stats_mean_ci(const double *x, size_t n, int reps, uint64_t seed, double *mean);

/* Geometric mean of positive values (0 if n == 0). */
double stats_geomean(const double *x, size_t n);

#endif
