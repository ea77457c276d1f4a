/* track.h: the tracks behind `ka --track NAME` (README, "What it does"). Each track
 * is a run over the task bank that ends in out/scorecard.json. This version
 * has track 1, capability: k one-shot samples a task from a model, graded,
 * scored (docs/capability.md). The other tracks are named here so that
 * `ka --track rsi` can say that they are not available in this version.
 * Track 3 (procedure RSI) and the controls are declared below
 * (track_procedure.c, track_controls.c; docs/procedures.md).
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
	int graders_per_gpu;	/* grade sessions per CUDA device, 0 = by cores */
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

/* Settings of a procedure-RSI run (track 3) or a controls run; start from
 * procedure_opts_default. Strings are borrowed. Tasks come from --train and
 * --heldout banks, or both from one bank split by task-name hash
 * (round.h). docs/procedures.md. */
struct procedure_opts {
	const char *model, *model_kind;
	const char *bank;	     /* split by hash when train/heldout are not given */
	const char *train, *heldout; /* two banks (both or neither) */
	int train_pct;		     /* percent of the bank that is train, default 50 */
	const char *tier;	     /* NULL = all */
	const char *target;	     /* cuda, opencl, auto */
	const char *out;	     /* default "out" */
	const char *procedure;	     /* round-0 procedure folder (procedure track),
				      * default procedures/one_shot */
	const char *procedures;	     /* folder of the shipped procedures (controls),
				      * default <data root>/procedures */
	const char *mode;	     /* prompt, strategies (default), full */
	const char *rsi_scorecard;   /* controls: a weight-RSI scorecard of the model */
	const char *platform, *prices;
	int gpu;    /* CUDA device to grade on */
	int rounds; /* default 5 */
	int budget; /* generations (and checks) per task per solve, default 4 */
	int64_t seed;
	double temperature;
	int max_tokens;
	double lua_wall_s; /* wall cap of one solve, default 600 */
	uint64_t lua_instructions;
	size_t lua_memory;
	int quiet, verbose, fresh;
	struct grade_protocol proto;
};

void procedure_opts_default(struct procedure_opts *o);

/* Track 3: rounds of solve (train), edit, evaluate (held-out) for a self
 * arm whose procedure the model rewrites and a frozen arm; writes
 * OUT/scorecard.json (procedure_rsi), every procedure version under
 * OUT/procedures/. Exit codes as track_capability_run. */
int track_procedure_run(const struct procedure_opts *o);

/* The non-recursive controls: best_of_k, self_refine and retrieval, frozen,
 * at one budget on the held-out split; OUT/scorecard.json (controls). */
int track_controls_run(const struct procedure_opts *o);

/* Settings of a frontier run (track 5, docs/frontier.md): the procedure
 * options for the model (the solver), bank, split, target, rounds and
 * output, plus the proposer. Strings are borrowed. */
struct frontier_opts {
	struct procedure_opts p;
	const char *proposer; /* model spec of the proposer, required */
	int k;		      /* solver samples per task and round, default 3 */
	int proposals;	      /* proposals asked per solved task and round, default 1 */
	double gold_wall_s;   /* wall-clock cap of one proposal's confined gold, default 120 */
};

/* Track 5: rounds of solve (the frontier, k samples each), propose (for
 * every solved task), validate; accepted variants join the frontier under
 * OUT/frontier/ with their lineage; OUT/scorecard.json (frontier). Exit
 * codes as track_capability_run. */
int track_frontier_run(const struct frontier_opts *o);

/* Settings of a weight-RSI run (track 2, docs/rsi.md); start from
 * rsi_opts_default. p carries what the procedure track shares (bank and
 * split, target, out, seed, temperature, max_tokens, grader protocol);
 * p.model is unused (the model is a checkpoint for the engine). Strings are
 * borrowed. */
struct rsi_opts {
	struct procedure_opts p;
	const char *model;	  /* HF id or local folder, required */
	const char *engine;	  /* engine name or path, default "torch" */
	const char *finetune;	  /* auto (default), full, lora */
	const char *prompt_style; /* solver (default) or short ("task: NAME") */
	int k;			  /* samples per task per round, default 3 */
	int rounds;		  /* default 5 */
	int cont;		  /* continued training instead of retraining from the base */
	int per_task_cap;	  /* SFT examples per task, default 4 */
	int interrupt_after;	  /* > 0: the ckpt_frozen arm after this round */
	int epochs, batch;	  /* default 2, 8 */
	double lr;		  /* default 1e-4 */
	double engine_timeout_s;  /* per engine call, default 86400 */
};

void rsi_opts_default(struct rsi_opts *o);

/* Track 2, weight RSI: arms self, fresh_frozen and round0, trained by the
 * engine and scored on the held-out split every round; writes
 * OUT/scorecard.json (weight_rsi). Exit codes as track_capability_run. */
int track_rsi_run(const struct rsi_opts *o);

/* Settings of a harness-RSI run (track 4, docs/harness.md); start from
 * harness_opts_default. p carries what the procedure track shares (bank and
 * split, target, out, seed, temperature, max_tokens, grader protocol, the
 * Lua caps); p.model is the researcher's model spec. Strings are borrowed. */
struct harness_opts {
	struct procedure_opts p;
	const char *trainee;	   /* HF id or local folder of the open trainee, required */
	const char *engine;	   /* engine name or path, default "torch" */
	const char *finetune;	   /* auto (default), full, lora */
	const char *prompt_style;  /* solver (default) or short ("task: NAME") */
	const char *harness;	   /* round-0 harness.lua, NULL = harnesses/default.lua */
	const char *harnesses;	   /* folder of edit.md, NULL = <data root>/harnesses */
	int k;			   /* trainee samples per task per round, default 3 */
	int rounds;		   /* default 3 */
	int max_examples;	   /* the data budget: SFT examples per training, default 256 */
	int epochs, batch, lora_r; /* the defaults a harness sees: 2, 8, 16 */
	double lr;		   /* default 1e-4 */
	double engine_timeout_s;   /* per engine call, default 86400 */
};

void harness_opts_default(struct harness_opts *o);

/* Track 4, harness RSI: arms improved (the researcher rewrites harness.lua
 * each round from the train-split evidence) and frozen (round 0's harness),
 * the same trainee, engine, seeds and budgets, both scored on the held-out
 * split every round; every harness version under OUT/harness/;
 * OUT/scorecard.json (harness_rsi). Exit codes as track_capability_run. */
int track_harness_run(const struct harness_opts *o);

/* Tracks this version knows by name (NULL-terminated). track_available
 * (track_capability.c) says only "capability" is; cmd_track.c dispatches
 * "procedure", "controls" and "frontier" before asking it. */
extern const char *const track_names[];

/* 1 if name is a track this version can run, 0 if it is a known track that
 * is not available yet, -1 if it is not a track at all. */
int track_available(const char *name);

#endif
