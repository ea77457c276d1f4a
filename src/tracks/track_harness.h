/* track_harness.h: what the two files of track 4 share (internal to
 * src/tracks): the run's state, one arm's round, and the helpers the
 * researcher's side (harness_edit.c: the evidence, the edit request, the
 * decision) uses from the track's side (track_harness.c: the pools, the
 * harness runs, training, sampling, the scorecard). docs/harness.md. */
#ifndef KA_TRACK_HARNESS_H
#define KA_TRACK_HARNESS_H

#include <jansson.h>

#include "harness.h"
#include "procrun.h"
#include "track.h"
#include "trainee.h"

#define TH_IMP 0 /* the improved arm */
#define TH_FRZ 1 /* the frozen arm */
extern const char *const th_arms[2];

/* One arm's round. */
struct arm_round {
	double *c, *ok, *tc, *tok; /* per held-out task / per train task */
	int *solved;
	int n_examples, n_selected, n_distinct, n_pool;
	double diversity; /* -1: none */
	double loss;	  /* NAN: not trained */
	int version;	  /* harness version used (round number), -1 none */
	char status[12];  /* ok, fallback, failed */
	char reason[512];
	json_t *hyper; /* with "order"; NULL when no harness ran */
	struct round_budget used;
};

struct htrack {
	const struct harness_opts *o;
	struct procrun r;
	struct trainee tr;
	char *edit_tmpl, *dir_h;
	char **hv; /* [R + 1]: the improved arm's harness of round r (hv[0]: round 0's) */
	int R, nh, nt;
	struct arm_round *ar[2];    /* [R + 1] */
	json_t *pool[2];	    /* verified train kernels per arm, ids 1.. */
	json_t *edits;		    /* [R]: the edit outcome of round r at r - 1 */
	struct round_budget *spend; /* the researcher's, per round */
	struct harness_bounds bounds;
	struct harness_hyper defaults;
	struct luabox_limits box;
};

/* "ka: ..." on stderr unless --quiet. */
void th_say(const struct htrack *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Entries of pool for task (NULL: all) and their distinct kernels. */
void th_pool_count(const json_t *pool, const char *task, int *n, int *distinct);

/* Mean of n values (0 when n is 0). */
double th_mean(const double *x, int n);

/* "round-N" for a harness version, "no harness" for -1, into buf. */
const char *th_vname(int v, char *buf, size_t cap);

/* text into OUT/harness/name (a failure is said, not fatal). */
void th_write_text(const struct htrack *t, const char *name, const char *text);

/* OUT/harness/round-r.lua and, for r > 0, round-r.diff against round
 * r - 1, with the lines added and removed. */
void th_save_version(struct htrack *t, int r, int *added, int *removed);

/* The harness input of round r on ctx. */
void th_input_of(const struct htrack *t, const json_t *ctx, int r, struct harness_input *in);

/* The edit before round r (harness_edit.c): the evidence from rounds < r
 * (the train split only) and what the current harness does with ctx, the
 * researcher's reply (journaled), the decision (journaled). t->hv[r] is
 * the new harness when accepted, else a copy of hv[r - 1]; the outcome
 * joins t->edits. 0, or -1 reported (a failed request, the journal). */
int th_edit(struct htrack *t, int r, const json_t *ctx);

#endif
