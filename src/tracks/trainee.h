/* trainee.h: an open model driven through a training/sampling engine
 * (engine.h, docs/engines.md) for a track that trains it: the prompts of
 * the split, one `sample` call graded into per-task figures and a list of
 * verified train kernels, the SFT file, one `train` call, and the
 * diversity of an SFT set. Every engine call is a journaled unit of the
 * run's journal; grading goes through round.h (one grade per task and
 * source hash over the run). The harness track (track_harness.c) uses it. */
#ifndef KA_TRAINEE_H
#define KA_TRAINEE_H

#include <jansson.h>

#include "engine.h"
#include "procrun.h"
#include "round.h"

struct trainee {
	struct procrun *r; /* split, journal, grader (borrowed) */
	struct engine en;
	const char *lang;	  /* the fence language replies are extracted in */
	const char *prompt_style; /* "solver" or "short" ("task: NAME") */
	int k;			  /* samples per prompt */
	char *dir_engine, *dir_models, *dir_data;
	int calls_run; /* engine calls run by this process */
};

/* Find the engine (engine_find) and name OUT/engine, OUT/models and
 * OUT/data (before OUT is touched). 0 or -1 with e. */
int trainee_open(struct trainee *t, struct procrun *r, const char *engine, double timeout_s,
		 const char *prompt_style, int k, struct ka_err *e);

/* Make the three folders (once OUT is the run's). 0 or -1 with e. */
int trainee_mkdirs(struct trainee *t, struct ka_err *e);
void trainee_close(struct trainee *t);

/* The prompt of task i of split s in the trainee's style (caller frees). */
char *trainee_prompt(const struct trainee *t, const struct procrun_split *s, int i);

/* What one sample call's replies scored. Per held-out task (hc, hok: mean
 * score and ok fraction over k; hs: some sample ok) and per train task (tc,
 * tok: the same), each NULL when not wanted; verified (NULL when not
 * wanted) gets one object per ok train reply, in reply order:
 * {task, tier, prompt, completion, code, hash, score, sample, tokens_out,
 * round}. used counts requests, checks and tokens. */
struct trainee_graded {
	double *hc, *hok, *tc, *tok;
	int *hs;
	json_t *verified;
	int round; /* written into each verified entry */
	struct round_budget used;
};

/* Sample model k times on the held-out prompts (heldout) and/or the train
 * prompts (train) as unit key (the replies in OUT/data/<key>.jsonl), and
 * grade the replies into g. 0 or -1 with e. */
int trainee_sample(struct trainee *t, const char *key, const char *model, int heldout, int train,
		   int64_t seed, struct trainee_graded *g, struct ka_err *e);

/* Write examples ([{prompt, completion}, ...]) as the SFT JSONL at path.
 * 0 or -1 with e. */
int trainee_write_sft(const char *path, const json_t *examples, struct ka_err *e);

/* Train base on the SFT file sft with hyper (the manifest's "hyper"
 * object) and seed into folder out, as unit key. *result is the engine's
 * result (new reference: method, steps, final_loss, ...). 0 or -1 with e. */
int trainee_train(struct trainee *t, const char *key, const char *base, const char *sft,
		  json_t *hyper, int64_t seed, const char *out, json_t **result, struct ka_err *e);

/* Share of distinct byte 4-grams among all 4-grams of the "completion"
 * strings of examples; -1 when there is none. */
double trainee_diversity(const json_t *examples);

#endif
