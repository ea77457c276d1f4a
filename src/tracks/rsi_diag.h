/* rsi_diag.h: the per-round figures of weight RSI beyond C (docs/rsi.md,
 * "Diagnostics"): how diverse the kernels an arm trains on are (distinct
 * token n-grams, zlib compression ratio), retention of round-0 solutions,
 * and the geometric-mean speedup against the compiled baseline with the
 * reason when there is none. Pure computation over what the track hands it:
 * no engine, journal or grader. Internal to src/tracks. */
#ifndef KA_RSI_DIAG_H
#define KA_RSI_DIAG_H

#include <jansson.h>

#include "metrics.h"

#define RSI_DIAG_NGRAM 4      /* token n-gram order of the distinct ratio */
#define RSI_DIAG_MIN_BYTES 64 /* fewer kernel bytes: no compression ratio */

/* Diversity of one set of kernels. */
struct rsi_data_diag {
	int n_kernels;	    /* kernels with source text */
	double distinct;    /* distinct token n-grams / all token n-grams; -1: none */
	double compression; /* zlib (level 9) bytes / raw bytes of the kernels joined
			     * by newlines: lower is more repetitive; -1 under
			     * RSI_DIAG_MIN_BYTES */
};

/* Diversity of n kernel sources (NULL entries are skipped). A token is a
 * run of [A-Za-z0-9_.] or one other non-space byte; n-grams do not cross
 * kernels; distinct counts over the whole set. Never fails. */
void rsi_diag_kernels(const char *const *kernels, int n, struct rsi_data_diag *out);

/* Diversity of the kernels of SFT examples ex (a JSON array of objects with
 * "completion"), each kernel extracted from its completion in lang (the
 * completion itself when it has no code block). Never fails. */
void rsi_diag_examples(const json_t *ex, const char *lang, struct rsi_data_diag *out);

/* Share of the n tasks with base[i] set that have now[i] set; -1 when no
 * task has base[i]. */
double rsi_diag_retention(const int *base, const int *now, int n);

/* The held-out samples of one arm in one round, kept for its speed figure. */
struct rsi_samples {
	int n_tasks, k;
	struct metrics_sample *s; /* [task * k + j] */
	int *n;			  /* samples kept per task (at most k) */
};

/* Room for k samples of each of n_tasks tasks (freed by rsi_samples_free). */
void rsi_samples_init(struct rsi_samples *x, int n_tasks, int k);

/* Add one sample of task (ignored when task is out of range or full). */
void rsi_samples_add(struct rsi_samples *x, int task, const struct metrics_sample *s);

void rsi_samples_free(struct rsi_samples *x);

/* The geometric-mean speedup against the compiled baseline of x, computed
 * as the capability track's aggregates compute it (metrics_aggregate's
 * geomean_speedup_compiled: a mean over tasks with a timed ok sample, CI
 * over tasks). Not defined when no ok sample has a compiled timing. */
void rsi_samples_compiled_x(const struct rsi_samples *x, struct metrics_figure *out);

/* Why a compiled_x is null (a static one-line reason): timing off, a
 * target without a compiled baseline (OpenCL), or no timed ok kernel. */
const char *rsi_compiled_x_reason(int timing, const char *target);

#endif
