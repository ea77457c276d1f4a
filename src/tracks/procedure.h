/* procedure.h: the procedure engine of track 3 (docs/procedures.md). A
 * procedure is a folder:
 *   procedure.lua   defines solve(), run in a luabox (luabox.h)
 *   prompt.md       the solver prompt template ({{task}}, {{strategies}},
 *                   and any {{key}} the script passes to ka.prompt)
 *   strategies.md   the strategy library
 *   archive.json    the archive index: verified train-split kernels
 * procedure_solve runs solve() for one task with one API, the table `ka`:
 *   ka.task()             the prompt-facing task: name, tier, description,
 *                         torch, reference (ref.c), target, prompt (the
 *                         standard solver prompt); never gold values
 *   ka.generate(p, opts)  a model completion (text) or nil, why; charged:
 *                         one request and its tokens
 *   ka.extract(reply)     the kernel source in a reply, or nil
 *   ka.check(code)        {verdict, ok, score, phase, detail}: compile and
 *                         correctness (and speed) with evidence, numbers with
 *                         a fraction redacted; charged: one check
 *   ka.archive.search(q [, n])  up to n (3) {task, description, code, score}
 *   ka.submit(code)       the answer (the last one submitted counts)
 *   ka.log(...)           a line in the run's log
 *   ka.prompt(vars)       prompt.md rendered; ka.budget() what is left;
 *                         ka.files.prompt / ka.files.strategies
 * The host (a track) supplies generate and check, which journal and grade;
 * the engine counts the budget and refuses calls past it. */
#ifndef KA_PROCEDURE_H
#define KA_PROCEDURE_H

#include <stdint.h>

#include "luabox.h"
#include "round.h"
#include "task.h"
#include "util.h"

#define PROCEDURE_FILE_MAX ((size_t)64 << 10) /* bytes per procedure file */
#define PROCEDURE_LOG_MAX ((size_t)64 << 10)
#define PROCEDURE_TEXT_MAX ((size_t)1 << 20) /* a prompt, checked or submitted code */

/* The files of one procedure version (each a NUL-terminated string). */
struct procedure {
	char *lua, *prompt, *strategies, *archive;
};

/* Read dir's four files (archive.json may be missing: "[]"). 0 or -1 with e. */
int procedure_load(const char *dir, struct procedure *p, struct ka_err *e);

/* Write the four files into dir (created). 0 or -1 with e. */
int procedure_save(const struct procedure *p, const char *dir, struct ka_err *e);

/* dst = a copy of src. */
void procedure_copy(struct procedure *dst, const struct procedure *src);
void procedure_free(struct procedure *p);

/* 16 hex digits naming the content of the four files. */
void procedure_hash(const struct procedure *p, char out[17]);

/* One verified train-split kernel (borrowed strings). */
struct procedure_archive_entry {
	const char *task, *description, *code;
	double score;
};

/* What the host does for the engine. generate returns 0 with *text (the
 * host's malloc'd copy, the engine frees) and the tokens of the call, or -1
 * with why (a failed request: the script sees nil, why); fatal set when the
 * host itself failed (journal, grader): the solve stops. check returns 0
 * with g filled or -1 (fatal, why set). idx counts the calls of each kind
 * from 0 within one solve. */
struct procedure_host {
	int (*generate)(void *ctx, int idx, const char *prompt, char **text, int64_t *tokens,
			int *fatal, char *why, size_t cap);
	int (*check)(void *ctx, int idx, const char *code, struct round_grade *g, char *why,
		     size_t cap);
	void *ctx;
};

/* What one solve sees. */
struct procedure_env {
	const struct ka_task *task;
	const char *task_prompt; /* the standard solver prompt of the task */
	const char *target;	 /* "cuda" / "opencl" */
	const struct procedure_archive_entry *archive;
	int n_archive;
	struct round_budget allow; /* per solve */
	struct luabox_limits box;
	uint64_t seed; /* math.random is seeded with it */
};

struct procedure_outcome {
	enum luabox_status status;
	char why[512];	 /* when status != LUABOX_OK */
	int fatal;	 /* the host failed (why says how): not the procedure's fault */
	char *submitted; /* the last ka.submit, NULL when none */
	struct round_budget used;
	char *log; /* the box's log */
	uint64_t instructions;
};

/* Run p's solve() for env->task. Returns 0 when the box ran it (whatever it
 * did: out->status and out->why say; a procedure error is not a failure of
 * the run), -1 when out->fatal. out is always fit for procedure_outcome_free. */
int procedure_solve(const struct procedure *p, const struct procedure_host *h,
		    const struct procedure_env *env, struct procedure_outcome *out);
void procedure_outcome_free(struct procedure_outcome *o);

/* The static checks of a version: every file within PROCEDURE_FILE_MAX,
 * archive.json a JSON array, procedure.lua loads in a box with lim and
 * defines a function solve. 0, or -1 with why ("procedure.lua: ..."). */
int procedure_validate(const struct procedure *p, const struct luabox_limits *lim, char *why,
		       size_t cap);

/* Files a mode may change: "prompt" (prompt.md), "strategies" (prompt.md,
 * strategies.md), "full" (also procedure.lua). 1 if known, 0 if not. */
int procedure_mode_known(const char *mode);

/* The edit in a model's reply applied to old: every block
 *   === file: NAME ===
 *   ...
 *   === end ===
 * replaces file NAME. 0 with *out (a new version), or -1 with why: no file
 * block, a file the mode may not change or that does not exist, a file
 * over PROCEDURE_FILE_MAX. */
int procedure_apply_edit(const struct procedure *old, const char *reply, const char *mode,
			 struct procedure *out, char *why, size_t cap);

/* tmpl with each {{keys[i]}} replaced by vals[i] (unknown placeholders are
 * kept as they are). Caller frees. */
char *procedure_subst(const char *tmpl, const char *const *keys, const char *const *vals, int n);

/* A copy of s with every number that has a fraction or an exponent
 * ("1.25", "3e-5") replaced by "#": grader evidence without gold values.
 * Caller frees. */
char *procedure_redact(const char *s);

/* The n best archive entries for query (word overlap with task name and
 * description, then name order) into idx (at most n). Returns the count. */
int procedure_archive_rank(const struct procedure_archive_entry *a, int n_a, const char *query,
			   int *idx, int n);

#endif
