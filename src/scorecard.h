/* scorecard.h: the scorecard contract, schemas "ka-scorecard/1" and "/2" (documented
 * field by field in docs/scorecard.md; docs/scorecard.schema.json is the
 * same contract as JSON Schema). Every track writes one scorecard per run;
 * the board, `ka scorecard check` and `ka submit check` read them.
 *
 * Checking has two layers, each stopping at the FIRST problem and reporting
 * it as one line "FILE: field.path: problem":
 *   scorecard_validate   structure: required fields, types, enums, ranges,
 *                        counts (n_tasks, n_samples, tiers present)
 *   scorecard_recompute  derived numbers: each sample's score, the
 *                        aggregates (recomputed with metrics.c, same seed),
 *                        the RSI summary against its rounds, the verdict
 * This module reads and writes JSON (jansson); the arithmetic is metrics.c. */
#ifndef KA_SCORECARD_H
#define KA_SCORECARD_H

#include <jansson.h>

#include "metrics.h"
#include "util.h"

/* Two versions are read: /1, which every track but weight RSI writes, and
 * /2 = /1 plus the weight-RSI diagnostics (the ckpt_frozen arm of the
 * recursion-interruption control, rows' compression, summary.interrupt_after,
 * self_minus_ckpt, compiled_x_reason, standardized), which weight RSI writes. */
#define SCORECARD_SCHEMA "ka-scorecard/1"
#define SCORECARD_SCHEMA_2 "ka-scorecard/2"
#define SCORECARD_MAX_BYTES ((size_t)64 << 20)
#define SCORECARD_TOL 1e-9

/* Tracks, in the order the board shows them. */
enum scorecard_track {
	SCORECARD_TRACK_CAPABILITY,
	SCORECARD_TRACK_WEIGHT_RSI,
	SCORECARD_TRACK_PROCEDURE_RSI,
	SCORECARD_TRACK_HARNESS_RSI,
	SCORECARD_TRACK_FRONTIER,
	SCORECARD_TRACK_CONTROLS,
	SCORECARD_TRACK_COUNT
};

/* "capability", "weight_rsi", ... */
const char *scorecard_track_name(enum scorecard_track t);
/* Parse a track name. 0 or -1. */
int scorecard_track_parse(const char *s, enum scorecard_track *out);

/* The sample verdicts, in grader order ("no_code" ... "ok"), NULL-ended. */
extern const char *const scorecard_verdicts[];

/* Read and parse path (at most SCORECARD_MAX_BYTES). Returns a new reference
 * (json_decref) or NULL with e = "FILE: ..." (unreadable, too big, not JSON
 * with line and column, not an object). Does not validate. */
json_t *scorecard_load(const char *path, struct ka_err *e);

/* Structural validation of a parsed scorecard; file names it in messages.
 * 0, or -1 with e set to the first problem. */
int scorecard_validate(const json_t *sc, const char *file, struct ka_err *e);

/* Recompute what a validated scorecard derives (sample scores, aggregates,
 * RSI summary values and verdict) and report the first disagreement beyond
 * SCORECARD_TOL. Call only after scorecard_validate succeeded. 0 or -1. */
int scorecard_recompute(const json_t *sc, const char *file, struct ka_err *e);

/* load + validate + recompute. Returns a new reference or NULL with e. */
json_t *scorecard_check_file(const char *path, struct ka_err *e);

/* The schema string of a validated scorecard (SCORECARD_SCHEMA or
 * SCORECARD_SCHEMA_2; borrowed from sc). */
const char *scorecard_schema_of(const json_t *sc);

/* Count tasks and samples of a validated scorecard (0 if it has none). */
void scorecard_counts(const json_t *sc, int *n_tasks, int *n_samples);

/* The per-sample results of a validated scorecard as metrics arrays.
 * Strings are borrowed from sc (keep sc alive); free with
 * scorecard_metrics_free. */
struct scorecard_metrics {
	struct metrics_task *tasks;
	int n_tasks;
	struct metrics_sample *samples; /* all samples, tasks point into it */
};
void scorecard_metrics_from_json(const json_t *sc, struct scorecard_metrics *m);
void scorecard_metrics_free(struct scorecard_metrics *m);

/* Writers, shared by the tracks (which write scorecards) and the checks
 * (which recompute them), so both produce the same JSON. Each returns a new
 * reference. */
/* {"value", "lo", "hi"}, or JSON null when f is not defined. */
json_t *scorecard_figure_json(const struct metrics_figure *f);
/* {"median", "lo", "hi"}, or JSON null when not present. */
json_t *scorecard_speedup_json(const struct metrics_speedup *s);
/* The inverse: *out from {"median", "lo", "hi"}; not present (all zero) when
 * j is not an object. j stays the caller's. */
void scorecard_speedup_get(const json_t *j, struct metrics_speedup *out);
/* One aggregate object (n_tasks, n_samples, correct, ..., mean_c). */
json_t *scorecard_agg_json(const struct metrics_agg *a);
/* The "aggregates" object: one entry per tier that has tasks ("L1", "L2",
 * "L3") and "overall", computed with metrics_aggregate at pass@k = k. */
json_t *scorecard_aggregates_json(const struct metrics_task *tasks, int n, int k);

/* Read a figure ({value, lo, hi} or null) into out (defined = 0 for null or
 * absent). Only for validated scorecards. */
void scorecard_figure_get(const json_t *fig, struct metrics_figure *out);

#endif
