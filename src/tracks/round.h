/* round.h: the machinery every RSI track shares (docs/procedures.md):
 *
 *   - the split: train tasks (what a track may learn from) and held-out
 *     tasks (the only ones Q and C are measured on), from two banks or from
 *     one bank by task-name hash; a task name in both is refused;
 *   - journaled units: one run journal per output folder (rundir.h), in
 *     which every unit of work (one arm solving one task in one round and
 *     phase, one edit) has a composite key "r<round>/<arm>/<phase>/<task>".
 *     Each model request of a unit is journaled under that key with its
 *     call index as the sample, so a unit run again after a kill gets the
 *     journaled replies back and sends only what was never answered; a
 *     finished unit's outcome is journaled too and never recomputed;
 *   - grades cached per (task, source hash) in the same journal;
 *   - budgets: requests, checks and tokens allowed and used, per arm; arms
 *     whose allowances differ by more than 1% are refused;
 *   - task-level paired bootstrap CIs for differences between arms, and
 *     the verdict rule, fixed before the run and written in the scorecard.
 * It knows nothing of procedures or Lua (procedure.h). */
#ifndef KA_ROUND_H
#define KA_ROUND_H

#include <jansson.h>
#include <stdint.h>

#include "grade.h"
#include "journal.h"
#include "metrics.h"
#include "model.h"
#include "task.h"
#include "util.h"

#define ROUND_KEY_MAX 512
#define ROUND_BOOT_REPS 2000
#define ROUND_BUDGET_TOL 0.01 /* arms may differ by at most 1% in allowance */

/* The rule every RSI track applies, stated before the run and copied into
 * the scorecard's summary.verdict_rule. */
extern const char ROUND_VERDICT_RULE[];

/* ---- the split ---- */

/* 1 when task name goes to the train split of a hash split with train_pct
 * percent train (0..100): util_hash64(name) % 100 < train_pct. */
int round_is_train(const char *name, int train_pct);

/* Split n named tasks by round_is_train into is_train[i] (0/1). When every
 * task lands on one side (and n >= 2), the task with the smallest hash
 * moves to train or the largest to held-out, so both sides have one. */
void round_split(const char *const *names, int n, int train_pct, int *is_train);

/* 0 when no name is in both lists, else -1 with e ("task 'x' is in both the
 * train and the held-out split"). */
int round_check_disjoint(const char *const *train, int n_train, const char *const *heldout,
			 int n_heldout, struct ka_err *e);

/* ---- budgets ---- */

struct round_budget {
	int64_t requests, checks, tokens;
};

/* a += b. */
void round_budget_add(struct round_budget *a, const struct round_budget *b);

/* The budget as {"requests", "checks", "tokens"} (new reference). */
json_t *round_budget_json(const struct round_budget *b);

/* 0 when the n allowances agree within ROUND_BUDGET_TOL in each of
 * requests, checks and tokens; else -1 with e naming the arms and the
 * quantity ("arms 'self' and 'frozen' differ by 3.0% in tokens ..."). */
int round_budgets_equal(const struct round_budget *allow, const char *const *arms, int n,
			struct ka_err *e);

/* ---- keys and units ---- */

/* "r<round>/<arm>/<phase>/<task>" (task may be NULL: "r<round>/<arm>/<phase>"). */
void round_key(char *buf, size_t cap, int round, const char *arm, const char *phase,
	       const char *task);

/* A unit's journaled outcome (a JSON object): 0 with *out (new reference),
 * 1 when the unit is not finished, -1 with e. */
int round_unit_get(struct journal *j, const char *key, json_t **out, struct ka_err *e);

/* Journal a finished unit's outcome (once: a second put is refused). */
int round_unit_put(struct journal *j, const char *key, const json_t *outcome, struct ka_err *e);

/* One model call of a unit: the journaled reply of (key, idx) when there is
 * a successful one (*sent = 0), else the request is journaled, sent through
 * m with sample = idx (so its seed is the run seed + idx) and the reply
 * journaled (*sent = 1). out is the caller's (journal_reply_free). 0 with
 * out filled (check out->ok), -1 with e when the journal fails. */
int round_generate(struct journal *j, struct model *m, const char *key, int idx, const char *prompt,
		   const char *lang, struct journal_reply *out, int *sent, struct ka_err *e);

/* A grade as the tracks keep it. */
struct round_grade {
	char verdict[32];
	int ok;
	double score; /* metrics_score of the sample */
	struct metrics_speedup eager;
	struct metrics_speedup compiled; /* against the compiled baseline (CUDA) */
	char phase[24];
	char *detail; /* the grader's evidence paragraph, owned */
};
void round_grade_free(struct round_grade *g);

/* Grade code for task t, once per (task, source hash) over the whole run:
 * the journal's grade under "grade/<task>/<hash>" when there is one, else
 * grade_candidate on s and the result journaled. *fresh = 1 when graded now.
 * 0 with g filled, -1 with e when the grader cannot work, -2 with e when the
 * task is broken (grade_candidate's -2: nothing journaled). */
int round_grade_code(struct journal *j, struct grade_session *s, int start_id,
		     const struct ka_task *t, const char *code, struct round_grade *g, int *fresh,
		     struct ka_err *e);

/* ---- statistics ---- */

/* Mean of x (n tasks) with its bootstrap CI over tasks (defined = 0 when
 * n == 0). The CI is widened to contain the mean. */
void round_mean_figure(const double *x, int n, uint64_t seed, struct metrics_figure *out);

/* Task-level paired bootstrap of mean(a - b), a[i] and b[i] being the same
 * task: value = mean(a) - mean(b), CI from resampling tasks. */
void round_paired_diff(const double *a, const double *b, int n, uint64_t seed,
		       struct metrics_figure *out);

#endif
