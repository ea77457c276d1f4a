/* trainee.h: an open model driven through a training/sampling engine
 * (engine.h, docs/engines.md) for a track that trains it: the prompts of
 * the split, one `sample` call graded into per-task figures and a list of
 * verified train kernels, the SFT file, one `train` call, the generation
 * allowance of an arm, the scorecard's model object and the diversity of
 * an SFT set. Every engine call is a journaled unit of the run's journal;
 * grading goes through round.h (one grade per task and source hash over
 * the run). The weight-RSI (track_rsi.c) and harness (track_harness.c)
 * tracks use it. */
#ifndef KA_TRAINEE_H
#define KA_TRAINEE_H

#include <jansson.h>

#include "engine.h"
#include "procrun.h"
#include "round.h"
#include "rsi_diag.h"

struct trainee {
	struct procrun *r; /* split, journal, grader (borrowed) */
	struct engine en;
	const char *lang;	  /* the fence language replies are extracted in */
	const char *prompt_style; /* "solver" or "short" ("task: NAME") */
	int k;			  /* samples per prompt */
	int score_compiled;	  /* held-out scores against the compiled baseline
				   * (set by the caller; default: the eager one) */
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
 * score and ok fraction over k, the score against the compiled baseline
 * when the trainee's score_compiled is set; hs: some sample ok; hsmp: each
 * sample's verdict and timings, for the speed figure) and per train task
 * (tc, tok: mean eager score and ok fraction), each NULL when not wanted;
 * verified (NULL when not wanted) gets one object per ok train reply, in
 * reply order: {task, tier, prompt, completion, code, hash, score, sample,
 * tokens_out, round}, hash naming code (util_hash64, 16 hex digits). used
 * counts requests, checks and tokens. */
struct trainee_graded {
	double *hc, *hok, *tc, *tok;
	int *hs;
	struct rsi_samples *hsmp;
	json_t *verified;
	int round; /* written into each verified entry */
	struct round_budget used;
};

/* Sample model k times on the held-out prompts (heldout) and/or the train
 * prompts (train) as unit key (the replies in OUT/data/<key>.jsonl, '/' in
 * key as '_'), and grade the replies into g. The replies file is hostile
 * (the model's text): one JSON object {id, text, tokens_in, tokens_out,
 * sample} a line, blank lines skipped, a line over 64 MiB, a line that is
 * not JSON or an id that names no prompt is an error naming the file.
 * Prints "ka: KEY: sampled" (or "journaled") unless quiet. 0 or -1 with e. */
int trainee_sample(struct trainee *t, const char *key, const char *model, int heldout, int train,
		   int64_t seed, struct trainee_graded *g, struct ka_err *e);

/* Write examples ([{prompt, completion}, ...]) as the SFT JSONL at path.
 * 0 or -1 with e. */
int trainee_write_sft(const char *path, const json_t *examples, struct ka_err *e);

/* Train base on the SFT file sft (n_examples lines) with hyper (the
 * manifest's "hyper" object) and seed into folder out, as unit key.
 * *result is the engine's result (new reference: method, steps,
 * final_loss, ...). Prints "ka: KEY: trained on N examples (method, final
 * loss L)" (or "journaled ...") unless quiet. 0 or -1 with e. */
int trainee_train(struct trainee *t, const char *key, const char *base, const char *sft,
		  size_t n_examples, json_t *hyper, int64_t seed, const char *out, json_t **result,
		  struct ka_err *e);

/* The generations one arm may draw over rounds 0..rounds when every round
 * samples k replies per train and per held-out task (round 0's draw shared
 * by the arms): requests and checks k x (train + held-out) x (rounds + 1),
 * tokens max_tokens per request. */
struct round_budget trainee_allowance(const struct trainee *t, int rounds);

/* The scorecard's description of the trained model spec (new reference):
 * {spec, backend: the engine's name, name: spec's last path part, kind:
 * "open"}. */
json_t *trainee_model_json(const struct trainee *t, const char *spec);

/* Share of distinct byte 4-grams among all 4-grams of the "completion"
 * strings of examples; -1 when there is none. */
double trainee_diversity(const json_t *examples);

#endif
