/* metrics.h: the scores of docs/scorecard.md. A sample's score s, and the
 * aggregates of a set of tasks (correct, fast, fast vs compiled, fast_p,
 * pass@k, geometric-mean speedups, mean C), each with a 95% percentile
 * bootstrap CI over tasks (METRICS_BOOT_REPS resamples, METRICS_BOOT_SEED).
 * Also the RSI verdict rule. Pure functions over caller-owned arrays: this
 * module knows nothing about JSON or files (scorecard.h does). */
#ifndef KA_METRICS_H
#define KA_METRICS_H

#include <stdint.h>

#define METRICS_BOOT_REPS 1000
#define METRICS_BOOT_SEED 0x6b612d626f6f74ULL /* "ka-boot" */

/* The thresholds p of fast_p, in the order of the arrays below. */
#define METRICS_N_P 3
extern const double metrics_p_values[METRICS_N_P];     /* 1, 1.5, 2 */
extern const char *const metrics_p_names[METRICS_N_P]; /* "1", "1.5", "2" */

/* A speedup (baseline time / candidate time) with its 95% CI. */
struct metrics_speedup {
	int present; /* 0: no measurement (no baseline, or not ok) */
	double median, lo, hi;
};

/* One graded sample. ok is 1 only for the verdict "ok". */
struct metrics_sample {
	int ok;
	struct metrics_speedup eager, compiled;
};

/* One task: its tier ("L1", "L2", "L3") and its samples (borrowed). */
struct metrics_task {
	const char *name;
	const char *tier;
	const struct metrics_sample *samples;
	int n_samples;
};

/* A figure with its 95% CI. defined = 0 when there is nothing to average
 * (no tasks; no correct sample for a geometric mean): written as null. */
struct metrics_figure {
	int defined;
	double value, lo, hi;
};

struct metrics_agg {
	int n_tasks, n_samples;
	struct metrics_figure correct, fast, fast_compiled;
	struct metrics_figure fast_p[METRICS_N_P], fast_p_compiled[METRICS_N_P];
	struct metrics_figure pass_at_k;
	struct metrics_figure geomean_speedup, geomean_speedup_compiled;
	struct metrics_figure mean_c;
};

/* The score s of one sample: 0 if not ok; 0.5 if ok and not fast (no speedup,
 * or speedup_lo <= 1); else 0.5 + 0.5 * min(1, log2(speedup_median) / 2).
 * Pass NAN for both speedups when there is no measurement. */
double metrics_score(int ok, double speedup_median, double speedup_lo);

/* Score of a sample from its eager speedup. */
double metrics_sample_score(const struct metrics_sample *s);

/* Unbiased pass@k of one task with n samples of which c are correct:
 * 1 - C(n-c, k) / C(n, k). For n < k the task counts as pass@n (1 if c > 0). */
double metrics_pass_at_k(int n, int c, int k);

/* Aggregate the tasks whose tier equals tier_filter (NULL = all tasks).
 * Definitions (each a mean over tasks of a per-task value, so every task
 * weighs the same; the CI resamples tasks):
 *   correct       fraction of samples that are ok
 *   fast          ok and eager speedup lo > 1; fast_compiled: vs compiled
 *   fast_p[i]     ok and eager speedup lo > p_i (fast_p[0] == fast)
 *   pass_at_k     metrics_pass_at_k(n, c, k) of the task
 *   geomean_*     exp(mean over tasks with >= 1 measured ok sample of the
 *                 task's mean log median speedup over those samples)
 *   mean_c        mean score s
 * out is filled completely; never fails. */
void metrics_aggregate(const struct metrics_task *tasks, int n, const char *tier_filter, int k,
		       struct metrics_agg *out);

enum metrics_verdict {
	METRICS_VERDICT_POSITIVE,
	METRICS_VERDICT_NO_SIGNAL,
	METRICS_VERDICT_NEGATIVE,
};

/* The RSI verdict: positive only if the CI of the key difference (self minus
 * fresh-frozen, improved minus frozen, ...) lies above 0 (lo > 0) and
 * beats_baseline (self also beats round0); negative if the CI lies below 0
 * (hi < 0); otherwise no signal. */
enum metrics_verdict metrics_rsi_verdict(const struct metrics_figure *diff, int beats_baseline);

/* "positive", "no signal", "negative". */
const char *metrics_verdict_name(enum metrics_verdict v);

/* Parse a verdict name. 0 or -1. */
int metrics_verdict_parse(const char *s, enum metrics_verdict *out);

#endif
