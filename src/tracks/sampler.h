/* sampler.h: the sample pipeline every track shares. A track hands it a set
 * of tasks with their rendered prompts and k; the sampler takes every sample
 * (task, s) through
 *     prompt -> model request -> reply journaled (source extracted)
 *            -> grade -> grade journaled
 * with model requests in flight while earlier replies are graded by one
 * worker thread per grade session (one per GPU; one for OpenCL), and, where
 * the target compiles ahead (CUDA), a pool of compile threads that fill the
 * compile caches with every task's baselines and every reply's source.
 * Every step is written to the run journal (journal.h) as it happens, so a
 * run killed at any point and started again continues: sampler_plan reads
 * what the journal holds, re-queues replies not yet graded and requests only
 * the samples that have no reply.
 *
 * sampler_collect turns the journaled grades back into the scorecard's
 * "tasks" array, results.jsonl lines and the metrics arrays (metrics.h), so
 * a resumed run writes the same files. A track that needs several sets of
 * samples (RSI rounds and arms) gives each its own journal and output folder.
 */
#ifndef KA_SAMPLER_H
#define KA_SAMPLER_H

#include <jansson.h>
#include <stdint.h>

#include "grade.h"
#include "journal.h"
#include "metrics.h"
#include "model.h"
#include "scorecard.h"
#include "util.h"

#define SAMPLER_MAX_SESSIONS 64
#define SAMPLER_DETAIL_MAX 4000 /* bytes of a grade's detail kept */

/* One task to sample. All borrowed from the track, which keeps them alive
 * as long as the sampler. */
struct sampler_task {
	struct ka_task *t;
	const char *prompt;	 /* rendered prompt sent as the only message */
	const char *prompt_hash; /* 16 hex digits, journaled with each request */
};

/* Settings shared by the pipeline and collect. Strings are borrowed. */
struct sampler_opts {
	const char *label;  /* track name shown on the progress line */
	const char *out;    /* output folder: kernels/, .grade/ under it */
	const char *target; /* "cuda" or "opencl" (resolved) */
	int k;		    /* samples per task */
	int64_t seed;	    /* sample s is requested with seed + s */
	int batch;	    /* requests sent between two journal checks (0: all) */
	int quiet, verbose;
};

struct sampler;

/* A sampler over n tasks journaling into j (both borrowed, kept alive by the
 * caller until sampler_free). Starts nothing. */
struct sampler *sampler_new(const struct sampler_opts *o, const struct sampler_task *tasks, int n,
			    struct journal *j);

/* Stop every thread left, close the grade sessions, free s. NULL is a no-op. */
void sampler_free(struct sampler *s);

/* Open one grade session per device in gpus (n of them; OpenCL: n = 1,
 * gpus[0] = 0, platform a substring or NULL), start the compile-ahead pool
 * where the target compiles ahead (queueing every task's baselines), and
 * record this start of the process with its devices in the journal. 0, or
 * -1 with e ("cannot start the <target> grader on device N: ..." or the
 * journal's error). */
int sampler_open_sessions(struct sampler *s, const char *platform, const int *gpus, int n,
			  const struct grade_protocol *proto, struct ka_err *e);

/* What the journal says is left, from sampler_plan. */
struct sampler_plan {
	int total;    /* n tasks * k */
	int graded;   /* samples with a journaled grade */
	int regrade;  /* replies journaled but not graded: queued */
	int requests; /* samples with no reply: to send */
};

/* Read every sample's state from the journal: count the graded ones, queue
 * the replies not graded yet, list the requests to send, and take the token
 * and cost totals for the progress line. Call once, after
 * sampler_open_sessions (or without sessions, to inspect). 0 or -1 with e. */
int sampler_plan(struct sampler *s, struct sampler_plan *out, struct ka_err *e);

/* The pipeline: start the graders on what is queued, journal and send the
 * planned requests through m (each reply journaled and queued from the model
 * callback; a reply with code is also written to out/kernels/), wait for
 * every grade, stop the compile threads. Progress on stderr (a terminal line
 * unless quiet; one line per sample when verbose). Returns 0, or -1 when the
 * run failed (sampler_failure says why); requests that failed are counted
 * (sampler_failed_requests), not a failure. */
int sampler_run(struct sampler *s, struct model *m);

/* Why sampler_run failed ("" if it did not). Borrowed from s. */
const char *sampler_failure(const struct sampler *s);

/* Requests of this start that failed. */
int sampler_failed_requests(const struct sampler *s);

/* Number of grade sessions open and the device report of session i
 * (borrowed). */
int sampler_n_sessions(const struct sampler *s);
const json_t *sampler_device(const struct sampler *s, int i);

/* The scorecard's "device" object (new reference) from the sessions'
 * reports: name, driver, runtime, test_grade, clocks (from the first
 * session), the whole report under extra (every session's under
 * extra.sessions when there are several). */
json_t *sampler_device_json(const struct sampler *s);

/* With verbose: one line on log with wall, generation and grading times per
 * stage, and the compile-ahead jobs. */
void sampler_report(const struct sampler *s, FILE *log);

/* What the journal holds, read by sampler_collect. */
struct sampler_outputs {
	json_t *tasks;		    /* scorecard "tasks": tasks with >= 1 graded sample */
	struct util_buf jsonl;	    /* results.jsonl: one line per graded sample */
	struct scorecard_metrics m; /* the same samples as metrics arrays */
	int n_samples, n_ok;
	json_t *holder_; /* {"tasks": tasks}, which m borrows from */
};

/* Read every graded sample of tasks (k each) from j: each sample's verdict,
 * detail (valid UTF-8, at most SAMPLER_DETAIL_MAX bytes), score, speedups
 * (cleaned: lo <= median <= hi, null unless ok), tokens, cost, latency and
 * source_path; results.jsonl lines add task, tier and the grader's whole
 * result. Kernel files missing under o->out are written again from the
 * journal (a failure there is a warning on stderr). 0, or -1 with e; out is
 * always filled enough for sampler_outputs_free. */
int sampler_collect(struct journal *j, const struct sampler_task *tasks, int n,
		    const struct sampler_opts *o, struct sampler_outputs *out, struct ka_err *e);
void sampler_outputs_free(struct sampler_outputs *out);

/* ---- pure helpers (exported for the tests) ---- */

/* A copy of s that is valid UTF-8 (bad bytes become '?'), at most cap bytes
 * without cutting a character. Caller frees. */
char *sampler_clean_utf8(const char *s, size_t cap);

/* A grader figure as a speedup fit for a scorecard: not present unless valid
 * with a finite median > 0; lo and hi replaced by the median when they are
 * not finite, not positive or on the wrong side of it. */
void sampler_speedup_clean(const struct grade_figure *f, struct metrics_speedup *out);

/* "kernels/<task>/<sample><ext>" (ext from the target). Caller frees. */
char *sampler_kernel_path(const struct sampler_opts *o, const char *task, int sample);

/* Write out/kernels/<task>/<sample>.<ext> when missing, or always with
 * force. 0 or -1 with e. */
int sampler_write_kernel(const struct sampler_opts *o, const char *task, int sample,
			 const char *code, int force, struct ka_err *e);

/* Parse "0,2,3" into device indices (at most SAMPLER_MAX_SESSIONS, no
 * repeats, each 0..1023). 0 or -1 with e ("--gpus: ..."). */
int sampler_parse_gpus(const char *s, int *out, int *n, struct ka_err *e);

/* GPUs visible to CUDA: CUDA_VISIBLE_DEVICES if set, else /dev/nvidiaN. */
int sampler_count_gpus(void);

#endif
