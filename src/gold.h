/* gold.h: the CPU gold of a task, computed by its single-source reference
 * (ref.c) compiled as plain C with fp64 outputs, OpenMP-parallel over work
 * items. gold_open compiles a small wrapper around ref.c into a shared object
 * (cached under $KA_CACHE/gold, default ~/.cache/ka/gold, keyed by the task
 * hash, the wrapper text, the reference headers and the compiler command)
 * and loads it. Gold can be computed for the whole shape or for any subset of
 * work items (gold_sample_items picks random plus boundary items). This
 * module also generates a shape's inputs (gold_inputs_new) so that every
 * caller uses the same keys. It does not compare outputs: that is the
 * grader's job.
 *
 * Where the reference runs: a trusted task's (struct ka_task.trusted: bank
 * code the operator gave, bank_trust) is loaded and run in this process, the
 * fast path the measured figures rest on. Any other task's (a frontier
 * proposal's ref.c, written by a model) is compiled here as every reference
 * is (jailed) and run only in ka-goldbox (goldclient.h), one confined box per
 * computation, under a deadline from this module's cost model; the values
 * are bit-identical. A boxed gold that runs over its deadline, dies, exits
 * or returns a malformed or non-finite reply is the task's failure: the
 * call returns -1 with e saying so, and gold_broken names it from then on
 * (every later call fails the same way without starting a box). */
#ifndef KA_GOLD_H
#define KA_GOLD_H

#include <stdint.h>

#include "ka_gen.h"
#include "task.h"
#include "util.h"

struct gold;

/* Compile (or find in the cache) and load t's reference. t must outlive the
 * returned handle. Returns a handle for gold_close, or NULL with e set; a
 * reference that does not compile gives "<dir>/ref.c: does not compile as C:
 * <first lines of the compiler log>". */
struct gold *gold_open(const struct ka_task *t, struct ka_err *e);

/* Compute gold at shape sh. inputs[k] holds input k in its dtype (numel
 * elements, see gold_inputs_new); outputs[j] is a double array of the FULL
 * numel of output j at sh, of which only the elements owned by the computed
 * items are written (item i owns [i*per_item, (i+1)*per_item)). For a
 * sample on a large shape, allocate outputs with calloc: untouched pages
 * cost no memory. items == NULL computes every item (n_items ignored);
 * otherwise items[0..n_items-1] must lie in [0, item count). The shape is
 * checked with task_check_shape first. 0 or -1 with e. */
int gold_compute(struct gold *g, const struct ka_shape *sh, void *const *inputs,
		 double *const *outputs, const int64_t *items, int64_t n_items, struct ka_err *e);

/* The same computation with inputs drawn on demand: inputs[k] is input k's
 * generator (gen_src_of with the call's key), and the reference, built a
 * second time as C++ with include/ka_ref.h's KA_GOLD_LAZY accessor, draws
 * only the elements the items read. Values are bit-identical to
 * gold_compute on the generated arrays. For the timed calls' checks, where a
 * few hundred items would otherwise need whole tensors regenerated. Returns
 * 1 (nothing computed; one line on stderr the first time) when ref.c does
 * not build as C++, else as gold_compute. */
int gold_compute_lazy(struct gold *g, const struct ka_shape *sh, const struct ka_gen_src *inputs,
		      double *const *outputs, const int64_t *items, int64_t n_items,
		      struct ka_err *e);

/* Stop using the lazy build of g (gold_compute_lazy returns 1 from now on):
 * the grader found it disagreeing with the C gold. */
void gold_lazy_off(struct gold *g);

/* Why g's boxed gold failed (the task's failure, with its evidence: what
 * happened, the shape and the items), or NULL while it has not (always NULL
 * for a trusted task's gold and for NULL). Borrowed from g. */
const char *gold_broken(const struct gold *g);

/* 1 when one of g's boxes died of a SIGKILL that ka did not send (the OOM
 * killer, a person; or the task's code itself): gold_broken's failure, or a
 * grader failure, may then be no evidence about the task (grade_candidate
 * grades once more). 0 for NULL and for a trusted task's gold. */
int gold_killed_outside(const struct gold *g);

/* This process is itself the confinement of an untrusted reference (the
 * frontier's gold child, frontier.h, which locks itself down before the
 * gold runs and can start no program after): every gold opened from now on
 * runs here, trusted or not. Irreversible; call before gold_open. */
void gold_run_here(void);

/* Work items to check on a shape, sorted ascending and distinct: n_random
 * distinct pseudo-random items (a pure function of seed; every item if
 * n_random >= the item count) plus the boundary items: the first, the last,
 * and for every item dimension the items whose coordinate in that dimension
 * is 0 or its maximum (up to 64 per such edge, evenly spread over the edge).
 * *items is a new array the caller frees. 0 or -1 with e. */
int gold_sample_items(const struct ka_task *t, const struct ka_shape *sh, uint64_t seed,
		      int n_random, int64_t **items, int64_t *n, struct ka_err *e);

/* gold_sample_items with at most edge_max items per edge (0..64; 0: only the
 * first and the last item besides the random ones). */
int gold_sample_items_edges(const struct ka_task *t, const struct ka_shape *sh, uint64_t seed,
			    int n_random, int edge_max, int64_t **items, int64_t *n,
			    struct ka_err *e);

/* ---- The gold's cost decides what a verified call computes ----
 * A task whose items are each a large amount of work (a GEMM row reduced to
 * its maximum, a group norm over a large group) must neither fail nor take
 * minutes: whether a call is checked in full, and on how many items when
 * sampled, follows the measured cost of an item, under a budget of the
 * parent's gold time per call. */

/* Limits of the choice (the grader's protocol supplies them). */
struct gold_check_limits {
	int64_t full_check_max; /* full only when the outputs have at most this many elements */
	int64_t n_random;	/* random items of a sampled call when affordable */
	int64_t elem_cap;	/* output elements a sampled call may bring back */
	double check_budget_s;	/* gold wall seconds for an untimed call */
	double timed_budget_s;	/* gold wall seconds for a timed call */
};

/* What one verified call checks. */
struct gold_check {
	int full;	  /* every item */
	int64_t n_random; /* sampled: random items (>= 1) */
	int edge_max;	  /* sampled: boundary items per edge (gold_sample_items_edges) */
	int64_t elem_cap; /* sampled: elements the items may bring back; a sample
			   * over it is checked on a spread of each item's elements */
	double item_s;	  /* one core's seconds per item (0: not measured) */
	int whole_inputs; /* sampled: regenerating whole inputs and the C gold on the
			   * items costs less than the lazy gold (items that each
			   * read much of a large input: a GEMM row reads all of B) */
};

/* Seconds one core spends on the gold of one item at sh: the lazy gold
 * timed on a few single items (first, last, middle; about 20 ms at most),
 * never under a tenth of an estimate from the task's min_flops and output
 * elements, which stands alone when ref.c has no lazy build. Cached for the
 * process by task and shape. 0 or -1 with e. */
int gold_item_cost(struct gold *g, const struct ka_shape *sh, double *item_s, struct ka_err *e);

/* The pure choice: full when the outputs are within full_check_max and every
 * item fits in budget_s on cores cores; else random plus boundary items as
 * many as the budget and elem_cap allow (lim->n_random and 64 per edge when
 * both allow it), never fewer than the first, the last and one random item.
 * per_item: output elements per item of each of t's outputs. */
void gold_check_choose(const struct ka_task *t, int64_t items, const int64_t *per_item,
		       int64_t out_elems, double item_s, int cores, double budget_s,
		       const struct gold_check_limits *lim, struct gold_check *out);

/* gold_check_choose for shape sh of g's task with the measured item cost
 * (measured only when the outputs are over full_check_max or the items are
 * not cheap), the machine's cores and the untimed or timed budget. A timed
 * call is full only when regenerating all its inputs and computing all its
 * gold takes one core at most timed_budget_s; else it is sampled. A sampled
 * call gets out->whole_inputs when regenerating whole inputs and the C gold
 * on its items is estimated cheaper than the lazy gold on them. 0 or -1
 * with e. */
int gold_check_plan(struct gold *g, const struct ka_shape *sh, int timed,
		    const struct gold_check_limits *lim, struct gold_check *out, struct ka_err *e);

/* Allocate and fill t's inputs at sh: input k gets key
 * gen_tensor_key(nonce, task_hash(t), sh, k, call). inputs must have room for
 * t->n_inputs pointers; each is a new buffer (free with gold_buffers_free).
 * Fails (no allocation left behind) if the shape is invalid, a tensor is
 * over cap_bytes in total (0 = no cap) or memory runs out. 0 or -1 with e. */
int gold_inputs_new(const struct ka_task *t, const struct ka_shape *sh, uint64_t nonce,
		    uint64_t call, size_t cap_bytes, void **inputs, struct ka_err *e);

/* Regenerate input k alone into an existing buffer (same key rule). */
int gold_input_fill(const struct ka_task *t, const struct ka_shape *sh, uint64_t nonce,
		    uint64_t call, int k, void *buf, struct ka_err *e);

/* Allocate zeroed double outputs (full numel) for t at sh. 0 or -1 with e. */
int gold_outputs_new(const struct ka_task *t, const struct ka_shape *sh, size_t cap_bytes,
		     double **outputs, struct ka_err *e);

/* Free n buffers of an array filled by gold_inputs_new/gold_outputs_new and
 * set them to NULL. */
void gold_buffers_free(void **bufs, int n);

/* Remove the gold builds' temporary folders (build-*) of the cache that are
 * older than max_age_s seconds: left by a ka that was killed while building
 * (a live build lasts at most its compile timeout; several ka may share the
 * cache). Returns how many were removed. */
int gold_clean_stale(double max_age_s);

/* Unload the reference. gold_close(NULL) does nothing. */
void gold_close(struct gold *g);

#endif
