/* devgold.h: the device gold, the parent's side (docs/grader.md "The gold's
 * cost"). A correctness call whose outputs the CPU gold cannot afford in
 * full (over full_check_max elements, or items too costly for the budget)
 * used to be checked on a sample of items only, so a sparse wrong answer at
 * a large shape could pass. On a target that supports it (CUDA) and for a
 * trusted task (from a bank the operator gave: struct ka_task.trusted), the
 * runner now checks every element against the fp64 gold computed on the
 * device by the task's reference, compiled here with nvcc into a module
 * (bank_cuda_gold_source: the CPU gold's own math, -fmad=false), while the
 * CPU gold still checks the sampled items and cross-checks the device gold
 * there. This module builds the module, decides which check a call gets and
 * turns the runner's counts into the tally the CPU comparison would give.
 *
 * Not here: the request and reply (runclient.h run_check_*), the device
 * side (src/runner/devcheck.cu), the call's other steps (grade.c). */
#ifndef KA_DEVGOLD_H
#define KA_DEVGOLD_H

#include <stdint.h>

#include "grade.h"
#include "runclient.h"
#include "task.h"
#include "util.h"

/* How a verified call was checked (the grade JSON's "checks"). */
enum devgold_check {
	DEVGOLD_CPU_FULL,    /* every element against the CPU gold ("cpu-full") */
	DEVGOLD_DEVICE_FULL, /* every element on the device, plus the CPU sample and
			      * the gold cross-check ("device-full") */
	DEVGOLD_SAMPLED,     /* random + boundary items against the CPU gold ("sampled") */
};

/* "cpu-full", "device-full" or "sampled". */
const char *devgold_check_name(enum devgold_check c);

/* What the choice depends on. */
struct devgold_when {
	int cpu_full;	 /* the CPU gold can afford every element (gold_check_plan) */
	int timed;	 /* a timed call: always the CPU's choice (sampled) */
	int trusted;	 /* the task is from a bank the operator gave */
	int device_ok;	 /* the target builds a gold module and the runner checks
			  * (hello's device_check) */
	double device_s; /* estimated device seconds of the gold (devgold_cost_s) */
};

/* The most device seconds a call's gold may be estimated at and still be
 * computed on the device; above it the call is sampled (a valid task must
 * never fail or take minutes because of its gold). */
#define DEVGOLD_BUDGET_S 5.0

/* The most seconds the parent waits for a device check's reply; past it the
 * grader fails (trusted code hung): never the candidate's timeout. */
#define DEVGOLD_TIMEOUT_S 120.0

/* The pure choice: CPU_FULL when the CPU can afford it; else DEVICE_FULL for
 * an untimed call of a trusted task on a device that checks, when the
 * estimate is within DEVGOLD_BUDGET_S; else SAMPLED. */
enum devgold_check devgold_choose(const struct devgold_when *w);

/* 0 when the operator turned the device gold off (KA_DEVICE_GOLD=off or
 * 0: every call is checked as before, large shapes sampled), else 1. */
int devgold_enabled(void);

/* A conservative estimate of the device's seconds for the gold of items
 * items costing item_s seconds of one CPU core each (gold_item_cost, which
 * counts the lazy gold's input generation too): the larger of one item on
 * one slow GPU thread (20 cores' time) and the whole on 500 cores' worth of
 * threads (an H200's fp64 rate is thousands of cores'). */
double devgold_cost_s(double item_s, int64_t items);

/* Build (or find in workdir/devgold/, keyed by the source, the
 * architecture and the nvcc command) t's gold module for arch ("sm_90a"):
 * nvcc -cubin -fmad=false, jailed like every compile (the source is
 * scanned for file-reading directives first). Returns the .cubin path
 * (malloc'd), or NULL with e ("<dir>/ref.c: does not compile as the device
 * gold: <log>", or a harness failure). */
char *devgold_build(const struct ka_task *t, const char *arch, const char *workdir,
		    struct ka_err *e);

/* The tally the CPU comparison of every element would have given, from the
 * runner's counts: n_bad, n_nonfinite, the largest error, and the first
 * GRADE_MAX_MISMATCH mismatches in output order then index order, as
 * grade_compare_output records them. names[j]: output j's name. tl from
 * grade_tally_init. */
void devgold_tally(const struct run_check_res *r, const char *const *names, struct grade_tally *tl);

/* The cross-check of the two golds on n sampled elements: dev[q] (the
 * device gold of element idx[q]) against cpu[idx[q]]. They may differ by a
 * thousandth of the task's tolerance at the element, or 1e-12 relative
 * (the caller passes atol = rtol = 0 for an integer output); non-finite
 * golds agree only when equal (two NaN agree). 0 when they agree, else 1
 * with the first disagreement's index in *at. */
int devgold_cross_check(const double *dev, const int64_t *idx, int64_t n, const double *cpu,
			double atol, double rtol, int64_t *at);

/* A device check's outcome, the call's verdict: first the cross-check of
 * each output j (dtypes[j]; integer outputs exact) between the device gold
 * at the sampled elements elems[j] (res->gold[j]) and the CPU gold cpu[j]
 * (full numel, written at those elements): a disagreement is -1 with e
 * naming the task, the shape, the element and both values (a grader
 * failure, never the candidate's). Then 0 when every element matched, or 1
 * with *v (wrong_answer or nonfinite), detail (cap bytes) and *evidence (a
 * new reference: mismatches, count, nonfinite, max_abs_error and "check":
 * "device-full") as the CPU comparison of every element gives them. */
int devgold_outcome(const struct ka_task *t, const char *shape, const int *dtypes,
		    const struct run_check_res *res, const int64_t *const *elems,
		    double *const *cpu, enum verdict *v, char *detail, size_t cap,
		    json_t **evidence, struct ka_err *e);

#endif
