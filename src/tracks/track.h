/* track.h: the tracks behind `ka --track NAME` (README, "What it does"). Each track
 * is a run over the task bank that ends in out/scorecard.json. This version
 * has track 1, capability: k one-shot samples a task from a model, graded,
 * scored (docs/capability.md). The other tracks are named here so that
 * `ka --track rsi` can say that they are not available in this version.
 *
 * The capability run is a pipeline: model requests in flight (model_run)
 * while earlier replies are graded by one worker thread per grade session
 * (one per GPU; one for OpenCL), every step written to the run journal
 * (journal.h) as it happens, so a killed run started again with the same
 * arguments continues where it stopped. This module parses nothing from the
 * command line (cmd_track.c does) and computes no statistics itself
 * (metrics.h, scorecard.h). */
#ifndef KA_TRACK_H
#define KA_TRACK_H

#include <stdint.h>

#include "grade.h"

/* Settings of one capability run. Start from capability_opts_default. The
 * strings are borrowed. */
struct capability_opts {
	const char *model;	/* model spec (model.h), required */
	const char *model_kind; /* "open" / "closed", NULL = guessed from the spec */
	const char *bank;	/* bank folder, NULL = bank_default_path() */
	const char *split;	/* "public" (default) or "heldout" */
	const char *tier;	/* "L1", "L2", "L3" or NULL for all */
	const char *target;	/* "cuda", "opencl" or "auto" */
	const char *out;	/* output folder, default "out" */
	const char *prompt;	/* prompt template, NULL = prompts/solver.md */
	const char *gpus;	/* "0,2,3" (CUDA), NULL = every visible GPU */
	const char *platform;	/* OpenCL platform substring, NULL = first that works */
	const char *prices;	/* price table for the model, NULL = default */
	int k;			/* samples per task, default 5 */
	int concurrency;	/* model requests in flight, default 16 */
	int64_t seed;		/* base sampling seed, default 0 */
	double temperature;	/* default 0.7 */
	int max_tokens;		/* default 8192 */
	int quiet, verbose;
	int fresh; /* discard an earlier run in out */
	struct grade_protocol proto;
};

/* Defaults as listed above (grade_protocol_default for proto). */
void capability_opts_default(struct capability_opts *o);

/* Resolve target "auto": "cuda" if ka-run-cuda is beside ka and a GPU is
 * visible (/dev/nvidia0 exists), else "opencl". Other names are returned as
 * given. Static string. */
const char *track_resolve_target(const char *target);

/* Run the capability track. Prints progress on stderr (a terminal line,
 * unless quiet) and the scorecard path and headline figures on stdout at the
 * end. Returns an exit code: 0 when every sample is graded and the
 * scorecard written; 1 when the run failed or is incomplete (failed requests,
 * grader failure: the same command continues it); 2 for bad input (unknown
 * model backend, bank or tier without tasks, a different run in out). */
int track_capability_run(const struct capability_opts *o);

/* Tracks this version knows by name (NULL-terminated); only "capability" is
 * available. */
extern const char *const track_names[];

/* 1 if name is a track this version can run, 0 if it is a known track that
 * is not available yet, -1 if it is not a track at all. */
int track_available(const char *name);

#endif
