/* target.h: what differs between device targets, behind one table
 * (struct target_ops), as ggml does with its backends. The grader (grade.c)
 * is written once against it. A target knows how to compile a candidate into
 * a shared object for the recorder, which recorder and runner programs to
 * use, and which trusted baselines a task has on it. */
#ifndef KA_TARGET_H
#define KA_TARGET_H

#include <jansson.h>

#include "task.h"
#include "util.h"
#include "verdict.h"

/* The largest compiled candidate object a compile keeps (in the workdir's
 * cache) and the recorder takes: a larger one (a large initialised array) is
 * the candidate's compile_error, removed at once, so that the cache holds
 * at most this much per candidate (docs/grader.md, "Durability"). */
#define TARGET_MAX_OBJECT (64u << 20)

/* When the object a compile made at so is over TARGET_MAX_OBJECT: remove it
 * and return 1 with why (cap bytes) naming its size, the candidate's
 * compile_error; else 0. */
int target_object_too_big(const char *so, char *why, size_t cap);

/* A trusted baseline to load into the runner: a plan (JSON text) and, for
 * CUDA, a module or native library path. */
struct target_baseline {
	char name[16];	 /* "eager" or "compiled" */
	char *plan_json; /* owned; NULL for a native baseline */
	char *module;	 /* owned path or NULL */
	char *native;	 /* owned path of a trusted library, or NULL */
};

/* Outcome of compiling a candidate. */
struct target_compiled {
	enum verdict verdict; /* VERDICT_OK, COMPILE_ERROR or FORBIDDEN */
	char detail[4096];
	char *so_path;	      /* owned; set when verdict is OK */
	char *module;	      /* owned; CUDA: path the runner loads device code from */
	json_t *record_extra; /* owned; merged into the recorder request */
};

/* How many compiles a target's precompile runs at once: at most first_jobs
 * until first_n candidates have ended, then at most jobs (first_n 0: jobs
 * from the start). jobs 0: one per online CPU; 1: one after another, in the
 * calling process. */
struct target_width {
	int jobs;
	int first_jobs;
	int first_n;
};

struct target_ops {
	const char *name;     /* "opencl", "cuda" */
	const char *recorder; /* program beside ka */
	const char *runner;   /* program beside ka */
	const char *src_ext;  /* ".c", ".cu" */
	/* Compile src (len bytes) for task t inside workdir. Returns 0 with
	 * out->verdict set (the candidate's fault is a verdict), -1 with e for a
	 * harness failure. */
	int (*compile)(const struct ka_task *t, const char *src, size_t len, const char *workdir,
		       const json_t *device, struct target_compiled *out, struct ka_err *e);
	/* Optional: compile n candidates ahead, in parallel, as many at once
	 * as w allows, so that compile() later finds them cached; done(i, arg)
	 * (if not NULL) as candidate i's compile ends. 0 or -1 with e. */
	int (*precompile)(const struct ka_task *t, int n, const char *const *srcs,
			  const size_t *lens, const char *workdir, const json_t *device,
			  const struct target_width *w, void (*done)(int i, void *arg), void *arg,
			  struct ka_err *e);
	/* Trusted baselines of t at shape sh: fills out[0..*n-1] (at most 2). */
	int (*baselines)(const struct ka_task *t, const struct ka_shape *sh, const json_t *device,
			 const char *workdir, struct target_baseline *out, int *n,
			 struct ka_err *e);
	/* Optional (NULL: no device gold on this target): build t's device
	 * gold module for device into workdir's cache (devgold.h). The path
	 * (malloc'd) or NULL with e. OpenCL has none: on PoCL the reference
	 * would run in the runner's own process, on the CPU the parent's gold
	 * shares, so the CPU keeps sampling there. */
	char *(*gold_module)(const struct ka_task *t, const json_t *device, const char *workdir,
			     struct ka_err *e);
};

/* The target named name, or NULL. */
const struct target_ops *target_find(const char *name);

void target_compiled_free(struct target_compiled *c);
void target_baseline_free(struct target_baseline *b);

/* Check a candidate's #include lines (also #include_next, #import, #embed)
 * for one target. The scan sees through line splices (also \r\n), the
 * trigraphs ??= ??/ and the digraph %:, comments between '#' and the name, and
 * string, character and raw string literals; a directive that a comment-blind
 * reading finds is checked too, so a misread literal cannot hide one (a
 * forbidden #include inside a block comment is refused: stricter, never
 * looser). A name must be written "..." or <...> (an #include of a macro is
 * refused); absolute paths, ".." and '\' are refused; then allowed(name, ctx)
 * must say 1 (each target passes its list of headers). 0 if fine, -1 with
 * why (cap bytes) naming the include and its line. */
int target_check_includes(const char *src, size_t len,
			  int (*allowed)(const char *name, const void *ctx), const void *ctx,
			  char *why, size_t cap);

/* Check a compiler dependency file (-MD output): every file the compilation
 * read must be inside workdir or one of system_dirs (NULL-terminated), after
 * resolving links. This is the ground truth whatever the preprocessor was
 * tricked into. 0, or -1 with why naming the file. */
int target_check_deps(const char *deps_path, const char *workdir, const char *const *system_dirs,
		      char *why, size_t cap);

#endif
