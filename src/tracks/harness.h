/* harness.h: the training harness of track 4 (docs/harness.md). A harness
 * is one Lua file, harness.lua, run in a luabox (luabox.h: the procedures'
 * sandbox, with its instruction, memory and wall-clock caps; no io, os,
 * require or debug) that decides what the trainer gets. It defines
 *
 *   function harness(ctx) ... return {examples = {...}, hyper = {...},
 *                                     order = "shuffle"} end
 *
 * ctx is the host's JSON context as Lua tables (the pool of verified train
 * kernels, the train tasks, this arm's history, the defaults and the
 * bounds); the API table `ka` has ka.log(...), ka.hash(s) (16 hex digits)
 * and ka.extract(text) (the kernel in a reply, as the grader extracts it).
 *
 * harness_run checks everything the script returns against the bounds and
 * says why in one line when it does not hold: an example names a pool entry
 * by id and may reformat its prompt and completion, but the kernel the
 * completion carries must be that entry's verified kernel, byte for byte;
 * weights repeat an example (1..bounds.weight_max); hyperparameters lie in
 * the documented bounds; the weighted count is at most hyper.max_examples,
 * itself at most the run's data budget, and the weighted text at most
 * HARNESS_SFT_MAX. It knows nothing of models, engines
 * or the grader. */
#ifndef KA_HARNESS_H
#define KA_HARNESS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "luabox.h"

#define HARNESS_FILE_MAX ((size_t)64 << 10)	   /* bytes of harness.lua */
#define HARNESS_LOG_MAX ((size_t)64 << 10)	   /* bytes of its log */
#define HARNESS_PROMPT_MAX ((size_t)64 << 10)	   /* bytes of one example's prompt */
#define HARNESS_EXTRA_MAX ((size_t)1 << 10)	   /* completion bytes beyond its kernel */
#define HARNESS_EXAMPLES_MAX 100000		   /* entries of examples, before weights */
#define HARNESS_SFT_MAX ((size_t)256 << 20)	   /* text of the examples, weights counted */
#define HARNESS_MEMORY_DEFAULT ((size_t)256 << 20) /* the Lua heap cap by default */
#define HARNESS_WALL_DEFAULT 30.0		   /* seconds of one run by default */

/* Hyperparameters of one training call. */
struct harness_hyper {
	double lr;
	int epochs, lora_r, batch, max_examples;
	int as_given; /* order "as_given" (a curriculum) instead of "shuffle" */
};

/* What a harness may choose: each hyperparameter's closed interval and the
 * largest weight. max_examples' upper end is the run's data budget. */
struct harness_bounds {
	double lr_min, lr_max;
	int epochs_min, epochs_max, lora_r_min, lora_r_max, batch_min, batch_max;
	int max_examples_max, weight_max;
};

/* The documented bounds with data budget max_examples (docs/harness.md). */
void harness_bounds_default(struct harness_bounds *b, int max_examples);

/* 0 when every field of h lies in b, else -1 with why ("lr 0.5 is outside
 * [1e-06, 0.01]"). */
int harness_hyper_check(const struct harness_hyper *h, const struct harness_bounds *b, char *why,
			size_t cap);

/* The bounds ({"lr": [min, max], ...}) and a hyper ({"lr", "epochs",
 * "lora_r", "batch", "max_examples"}; not its order) as JSON objects (new
 * references), as ctx and the scorecard show them. */
json_t *harness_bounds_json(const struct harness_bounds *b);
json_t *harness_hyper_json(const struct harness_hyper *h);

/* One run's input. ctx is a JSON object the script sees as its argument;
 * ctx.pool must be an array of objects with string fields "task", "code",
 * "hash", "prompt" and "completion" (example ids are 1-based indexes into
 * it). */
struct harness_input {
	const json_t *ctx;
	struct harness_hyper defaults; /* what a field missing from hyper takes */
	struct harness_bounds bounds;
	const char *lang; /* the fence language of the kernels (extract.h) */
	struct luabox_limits box;
	uint64_t seed; /* math.random is seeded with it */
};

/* One run's outcome. */
struct harness_result {
	enum luabox_status status; /* of the box; LUABOX_ERROR also for a bad output */
	char why[512];		   /* one line when the run is rejected */
	json_t *examples;	   /* [{id, task, prompt, completion}], weights expanded */
	struct harness_hyper hyper;
	int n_selected; /* entries of examples, before weights */
	int n_distinct; /* distinct (task, kernel) among them */
	char *log;	/* the box's log */
	uint64_t instructions;
};

/* Run lua's harness(ctx) on in and check its output. 0 with out filled when
 * it is accepted; -1 when it is rejected (out->why says why in one line of
 * printable ASCII: a parse error, a Lua error such as a sandbox escape
 * attempt, a cap, a field out of bounds). out is always fit for harness_result_free. */
int harness_run(const char *lua, const struct harness_input *in, struct harness_result *out);
void harness_result_free(struct harness_result *r);

/* The static checks of a harness: at most HARNESS_FILE_MAX bytes, loads in
 * a box with lim (its top level meets the caps) and defines a function
 * harness. 0, or -1 with why ("harness.lua: ..."). */
int harness_validate(const char *lua, const struct luabox_limits *lim, char *why, size_t cap);

/* The new harness.lua in a researcher's reply: the text between a line
 * "=== file: harness.lua ===" and a line "=== end ===". 0 with *lua (caller
 * frees), or -1 with why: no block, a block for another file, no end line,
 * over HARNESS_FILE_MAX. */
int harness_parse_edit(const char *reply, char **lua, char *why, size_t cap);

/* 16 hex digits naming a harness's text. */
void harness_hash(const char *lua, char out[17]);

#endif
