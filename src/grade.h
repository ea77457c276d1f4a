/* grade.h: the grader's protocol (docs/grader.md), target-agnostic.
 * A grade session owns one runner (trusted replay on one device) and the
 * secret per-run nonce. grade_candidate takes a candidate's source through
 * compile -> record (sandboxed recorder, per shape) -> load (runner validates
 * the plan) -> correctness on every check shape and the benchmark shape (fresh
 * inputs every call, poisoned outputs, canaries, input hashes, gold in the
 * parent) -> timing interleaved with the baselines (ABAB blocks, flush before
 * every sample, every timed output verified on sampled items) -> verdict and
 * speedups with bootstrap CIs. The parent never runs candidate code and never
 * opens a device context. docs/grader.md explains each defence. */
#ifndef KA_GRADE_H
#define KA_GRADE_H

#include <jansson.h>
#include <stdint.h>

#include "stats.h"
#include "task.h"
#include "util.h"
#include "verdict.h"

/* Protocol parameters (recorded in every result). */
struct grade_protocol {
	int min_samples;	/* per side, >= 20 */
	int max_samples;	/* per side, cap 500 */
	double max_seconds;	/* timing phase cap, 60 */
	double ci_target;	/* stop when CI half-width / median <= this (0.01) */
	int block;		/* samples per ABAB block */
	int checks_per_shape;	/* correctness calls per check shape (fresh inputs each) */
	int sample_items;	/* random work items verified at large shapes */
	int64_t full_check_max; /* verify all items when the count is at most this */
	double call_timeout;	/* watchdog per runner call, seconds */
	double record_timeout;	/* watchdog per recorder run, seconds */
	double compile_timeout;
	double floor_factor; /* implausible below floor_factor * roofline minimum */
	int timing;	     /* 0: correctness only */
	int pipeline;	     /* call-level overlap (docs/grader.md): GRADE_PIPELINE_* */
};

/* The parent checks call k while the runner runs call k+1: never (OFF), for
 * every call (ON), or (AUTO, the default) for every call on a GPU and for
 * the untimed calls only on a CPU device (where the parent's checking would
 * share the cores with the kernels being timed). */
#define GRADE_PIPELINE_OFF 0
#define GRADE_PIPELINE_ON 1
#define GRADE_PIPELINE_AUTO 2

/* "off", "on" or "auto" into *out (GRADE_PIPELINE_*). 0, or -1 for any
 * other text. */
int grade_pipeline_parse(const char *text, int *out);

/* Fill p with the protocol's defaults (docs/grader.md). */
void grade_protocol_default(struct grade_protocol *p);

/* The protocol as JSON (new reference). */
json_t *grade_protocol_json(const struct grade_protocol *p);

struct grade_session;

/* Start a session on target "opencl" or "cuda": starts the runner on the
 * device (platform substring / device index, may be NULL/0), reads its
 * properties, draws the secret nonce. workdir holds compiled candidates
 * (created if missing). NULL with e on failure (no such target, runner
 * missing, no device). */
struct grade_session *grade_session_open(const char *target, const char *platform, int device,
					 const struct grade_protocol *p, const char *workdir,
					 struct ka_err *e);

/* A session with no runner and no device: it compiles and records only, with
 * the device described by device (a runner's hello, e.g. a stored one for
 * tests; borrowed). grade_candidate then stops after recording every shape,
 * with verdict ok and phase "record" if the candidate got that far. For
 * checking the record stage where there is no GPU. */
struct grade_session *grade_session_open_offline(const char *target, const json_t *device,
						 const struct grade_protocol *p,
						 const char *workdir, struct ka_err *e);

/* The session will grade nothing more for now (its share of the work is
 * done): its runner is stopped, so that the device memory it held is free
 * for the other sessions on the device, and it no longer holds up their
 * memory turns (docs/grader.md, "Device memory"). A later grade starts a
 * fresh runner. NULL, offline, already idle or alone on its device: no-op. */
void grade_session_idle(struct grade_session *s);

/* Stop the runner and free the session. NULL is a no-op. */
void grade_session_close(struct grade_session *s);

/* The device description the runner reported (borrowed). */
const json_t *grade_session_device(const struct grade_session *s);

/* Whether grade_warm has anything to do for s's target. */
int grade_compiles_ahead(const struct grade_session *s);

/* Say that the candidates s grades from now on were compiled ahead
 * (grade_precompile in another process): their compiles are cache hits, so
 * the gold ahead, which works beside a grade's compile, is not used. */
void grade_session_precompiled(struct grade_session *s);

/* Compile ahead into s's caches, safe from any thread while s grades:
 * candidate src (len bytes) of task t, or with src NULL t's trusted baselines
 * (and, for a trusted task on a runner with the device check, its device
 * gold module: devgold.h).
 * Nothing is loaded or run; grade_candidate later finds the results in the
 * cache. Returns 1 (nothing to do) for targets that compile in the runner
 * (OpenCL), else 0, or -1 with e (a candidate that does not compile is not
 * an error here: its own grade reports the verdict). */
int grade_warm(const struct grade_session *s, const struct ka_task *t, const char *src, size_t len,
	       struct ka_err *e);

struct target_width;

/* Compile n candidate sources ahead in parallel (as many at once as w says:
 * target.h) where the target supports it, so grade_candidate finds them
 * cached; done(i, arg), if not NULL, as candidate i's compile ends. A no-op
 * for targets that compile quickly. 0 or -1 with e. */
int grade_precompile(struct grade_session *s, const struct ka_task *t, int n,
		     const char *const *srcs, const size_t *lens, const struct target_width *w,
		     void (*done)(int i, void *arg), void *arg, struct ka_err *e);

/* Name of the session's target ("opencl"/"cuda"). */
const char *grade_session_target(const struct grade_session *s);

/* A median with its 95% CI; valid = 0 when not measured. */
struct grade_figure {
	int valid;
	double median, lo, hi;
	int n;
};

struct grade_result {
	enum verdict verdict;
	char detail[4096];	     /* one paragraph of evidence */
	json_t *evidence;	     /* structured evidence (mismatches, ...), owned */
	json_t *checks;		     /* owned: how each correctness call was checked,
				      * [{"shape", "check"}] (devgold.h), or NULL */
	char phase[24];		     /* where the verdict was reached */
	char shape[128];	     /* the shape it was reached at */
	struct grade_figure time_us; /* candidate */
	struct grade_figure eager_us, compiled_us;
	struct grade_figure speedup_eager, speedup_compiled;
	struct grade_figure cupti_span_us;	   /* CUDA: first kernel start to last end */
	int cupti_host_openings;		   /* CUDA: verified calls with no window marker */
	int clock_sm_min, clock_sm_max, clock_mem; /* MHz seen while timing (NVML) */
	int64_t throttle_reasons;		   /* OR of the NVML reasons seen */
	double compile_s, record_s, correct_s, timing_s, total_s;
	double load_s;	 /* part of record_s: the runner building and
			  * validating the plans (device code compile) */
	double runner_s; /* wall time spent waiting for the runner (device) */
	double verify_s; /* the parent checking outputs: gold (and inputs) on the CPU, compare */
	double device_wait_s; /* waiting for the device lock (other graders on the
			       * same device: devlock.h); not in runner_s */
	/* The rest of the parent's time in the correctness and timing phases,
	 * so that the phases add up (docs/grade-result.md, "seconds"): */
	double setup_s;	   /* opening the gold, finding and loading the baselines */
	double ahead_s;	   /* the gold ahead's thread (grade.c), during the compile:
			    * not the parent's time, not in total_s's sum */
	double protocol_s; /* each call's request built (keys, poison, sampled
			    * items) and serialised, its reply parsed */
	double stats_s;	   /* the stop rule, the bounds, medians and bootstrap CIs */
	double other_s;	   /* total less every phase above: what none accounts for */
	int test_grade;
	char bench_shape[128];
	/* The verdict or the grader failure rests on a helper's death by a
	 * SIGKILL that ka did not send: the runner's (struct
	 * run_status.killed_outside), the recorder's (struct
	 * recclient_result.killed_outside) or the gold box's
	 * (gold_killed_outside). */
	int killed_outside;
	/* "" or why the candidate was graded a second time (grade_candidate):
	 * the first grade's verdict and evidence. */
	char regraded[640];
};

/* Grade one candidate source (len bytes; may be empty: no_code). A failed
 * grade whose verdict, grader failure or task failure rests on a helper's
 * death by a SIGKILL that ka did not send (the OOM killer under the machine's
 * load, a person) is graded once more (on a fresh runner where the runner
 * died), and r->regraded says why. The runner runs no model code, so its
 * death is no evidence; the recorder and the gold box do (a candidate's host
 * code, an untrusted task's ref.c could kill themselves), so the second grade
 * stands whatever it finds: one extra grade at most. Returns 0 with r filled
 * whatever the candidate did, or -1 with e only when the grader itself cannot
 * work (runner lost and not restartable, gold failed, ...), or -2 with e
 * ("task NAME is broken: ...", the evidence) when the task failed, neither
 * the candidate nor the grader: a task that is not trusted bank code (struct
 * ka_task.trusted) whose confined gold ran over its deadline, died, or
 * answered garbage (gold.h), or whose baseline derived from its ref.c failed.
 * Nothing of the candidate's is judged then: r holds no verdict.
 * bench_override: a shape string replacing the benchmark shape, or NULL (on
 * test-grade devices the default is the largest check shape; see
 * docs/grader.md). Free r with grade_result_free. */
int grade_candidate(struct grade_session *s, const struct ka_task *t, const char *src, size_t len,
		    const char *bench_override, struct grade_result *r, struct ka_err *e);

void grade_result_free(struct grade_result *r);

/* How many graders (grade sessions) to run per device by default where the
 * target's kernels run on the device, not the CPU: one per 4 cores, shared
 * by n_devices, 1 to 4. */
int grade_graders_default(int n_devices);

/* Call from a thread that grades while n_graders threads of this process
 * grade at once (ka grade --graders, the tracks' graders per GPU): the CPU
 * gold of this thread's grades runs on cores / n_graders OpenMP threads, so
 * the graders share the cores instead of each taking all of them. */
void grade_thread_share(int n_graders);

/* The result as JSON, schema "ka-grade/1" (docs/grade-result.md). New
 * reference. */
json_t *grade_result_json(const struct grade_session *s, const struct ka_task *t,
			  const struct grade_result *r);

/* ---- The grader's pure parts (no session, no runner, no I/O), exposed
 * for tests/unit/test_grade.c. ---- */

/* How many random items a sampled check draws (the boundary items come on
 * top): sample_items, fewer when the widest output item (per_item[j]
 * elements, n_outputs of them) would bring back more than ~64 Ki elements,
 * never fewer than 8. */
int64_t grade_sample_count(int sample_items, const int64_t *per_item, int n_outputs);

#define GRADE_MAX_MISMATCH 10 /* mismatches kept as evidence per call */

/* What a comparison with gold found, over one or more outputs. */
struct grade_tally {
	int64_t n_bad;	     /* elements outside tolerance (non-finite ones included) */
	int64_t n_nonfinite; /* NaN/Inf elements */
	double max_err;	     /* largest finite absolute error among the bad */
	json_t *mismatches;  /* owned: the first GRADE_MAX_MISMATCH bad elements as
			      * {"output","index","got","expected"} ("got" 0 when
			      * non-finite) */
	/* Elements of an integer output whose gold no value of the dtype
	 * equals exactly (dtype_int_gold_check: beyond 2^53, fractional, out of
	 * range): not compared, since no verdict on them would be sound. The
	 * first one's output, index and reason. */
	int64_t n_inexact;
	const char *inexact_output;
	int64_t inexact_index;
	char inexact_why[160];
};

/* Start an empty tally (allocates tl->mismatches). */
void grade_tally_init(struct grade_tally *tl);

/* Release tl->mismatches. NULL is a no-op. */
void grade_tally_free(struct grade_tally *tl);

/* Compare n packed elements got (ka_kernel.h dtype code dtype) of the output
 * called name with gold (fp64): element q stands for gold[idx[q]] (idx NULL:
 * gold[q]). An element is bad when it is not finite or |got - gold| >
 * atol + rtol * |gold| (a NaN gold is never matched). An integer output's
 * element whose gold is not exactly a value of its dtype is counted in
 * tl->n_inexact instead (the caller's grader failure). Adds to tl. */
void grade_compare_output(const char *name, int dtype, const uint8_t *got, int64_t n,
			  const int64_t *idx, const double *gold, double atol, double rtol,
			  struct grade_tally *tl);

/* The verdict of a tally with n_bad > 0 (nonfinite when any bad element is
 * non-finite, else wrong_answer), and its one-paragraph evidence into
 * detail (cap bytes, truncated): the counts, the tolerance, whether items
 * were sampled, and the first three mismatches. */
enum verdict grade_tally_describe(const struct grade_tally *tl, double atol, double rtol,
				  int sampled, char *detail, size_t cap);

/* The roofline minimum time in seconds: the larger of min_bytes / peak_bw
 * and min_flops / peak_flops. */
double grade_roofline_s(int64_t min_bytes, int64_t min_flops, double peak_bw, double peak_flops);

/* The timing cross-checks: the event time summed over the timed calls may
 * not exceed their wall time (0.01% slack), and the median (us) may not be
 * below floor_factor * floor_s. VERDICT_OK (why empty) or
 * VERDICT_IMPLAUSIBLE_TIME with the reason in why (cap bytes). */
enum verdict grade_timing_check(double sum_event_s, double sum_wall_s, double median_us,
				double floor_s, double floor_factor, char *why, size_t cap);

#endif
