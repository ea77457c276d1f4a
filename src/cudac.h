/* cudac.h: the parent's side of compiling a CUDA candidate (docs/cuda-target.md).
 * One .cu file becomes a shared object for the recorder: its #include lines
 * are checked, nvcc runs with fixed flags in a private directory that holds
 * only the source and ka_kernel.h, under a wall-clock limit; then the object's
 * undefined dynamic symbols are checked against what the recorder provides
 * plus a short C/C++ runtime allow-list, and each kernel's parameter layout is
 * read from the cubin inside the object's `.nv_fatbin` (elfread.h). Results are
 * cached by a key over everything that affects the output. Never runs the
 * candidate's code; never opens a GPU.
 *
 * The symbol lists are in common/cudasym.h, shared with the recorder
 * (record_cuda.c), so the parent's check and the recorder's classification
 * cannot drift apart. */
#ifndef KA_CUDAC_H
#define KA_CUDAC_H

#include <jansson.h>
#include <stddef.h>
#include <string.h>

#include "cudasplit.h"
#include "cudasym.h"
#include "elfread.h"
#include "util.h"
#include "verdict.h"

#define CUDAC_MAX_SOURCE (1u << 20) /* bytes of a candidate .cu */
#define CUDAC_MAX_LOG 16384	    /* bytes of compiler log kept */
#define CUDAC_TIMEOUT_S 120.0	    /* default wall-clock limit of one nvcc run */

/* Options of one compilation. */
struct cudac_opts {
	const char *arch;	 /* "sm_90a": -arch=<arch>; must match sm_[0-9]+[af]? */
	const char *cache_dir;	 /* where compiled objects are kept (created) */
	const char *const *libs; /* NULL-terminated allowed libraries ("cublas",
				  * "cublasLt", "cudnn"), or NULL for none */
	double timeout_s;	 /* 0 = CUDAC_TIMEOUT_S */
	const char *nvcc;	 /* NULL = $CUDA_HOME/bin/nvcc, nvcc on PATH,
				  * /usr/local/cuda/bin/nvcc */
	const char *include_dir; /* NULL = <data root>/include (holds ka_kernel.h) */
	const char *compiler;	 /* "split" (nvcc's phases run by ka in parallel,
				  * docs/compile.md) or "nvcc" (one nvcc run); NULL =
				  * $KA_CUDA_COMPILER, else "split" */
};

/* The outcome of one compilation. */
struct cudac_result {
	enum verdict verdict; /* VERDICT_OK, VERDICT_COMPILE_ERROR or VERDICT_FORBIDDEN */
	char detail[CUDAC_MAX_LOG + 512]; /* compile log (capped), or what is forbidden */
	char *so_path;			  /* owned; the compiled object (set when OK) */
	int cached;			  /* 1 if the object came from the cache */
	double seconds;			  /* wall time of the compiler (0 when cached) */
	int split;			  /* compiled (or cached) by the split path */
	struct cudasplit_stats stats;	  /* the split path's phases (when it compiled) */
	struct elf_kernels kernels;	  /* kernels and parameter layouts (when OK) */
};

/* Compile src (len bytes of .cu text) with o. Returns 0 with r->verdict set
 * (the candidate's fault is a verdict, never an error), or -1 with e when the
 * grader itself cannot compile (no nvcc, unwritable cache, bad arch string).
 * Free r with cudac_result_free. */
int cudac_compile(const char *src, size_t len, const struct cudac_opts *o, struct cudac_result *r,
		  struct ka_err *e);

/* Compile n sources in parallel with up to jobs processes (0 = number of
 * online CPUs). r[i] and rc[i] are what cudac_compile gives for srcs[i]; e[i]
 * holds the harness error when rc[i] is -1. Returns 0 if every rc[i] is 0,
 * else -1. Candidates with the same source share one nvcc run through the
 * cache. */
int cudac_compile_many(int n, const char *const *srcs, const size_t *lens,
		       const struct cudac_opts *o, int jobs, struct cudac_result *r, int *rc,
		       struct ka_err *e);

/* Called as candidate i's compile ends (whatever its outcome). */
typedef void (*cudac_done_fn)(int i, void *arg);

/* Compile n sources into o's cache, ahead of cudac_compile, with up to jobs
 * processes (0 = one per online CPU; 1 = here, one after another), starting
 * them in order, and up to first_jobs of them until first_n sources have
 * ended (first_n 0: jobs from the start); done(i, arg), if not NULL, is
 * called in this process as each candidate's compile ends (a duplicate of
 * an earlier source when that one ends). Outcomes are not returned: cudac_compile finds them cached
 * (or compiles again where the cache kept nothing). Returns 0. Reaps any
 * child of this process (waitpid(-1)): call it where no other children run. */
int cudac_compile_ahead(int n, const char *const *srcs, const size_t *lens,
			const struct cudac_opts *o, int jobs, int first_jobs, int first_n,
			cudac_done_fn done, void *arg);

void cudac_result_free(struct cudac_result *r);

/* The request fragment the recorder needs for this module (docs/cuda-target.md):
 * [{"name":..., "params":[{"offset":o,"size":s},...], "param_bytes":...,
 * "num_regs":..., "static_smem":..., "local_bytes":..., "const_bytes":...,
 * "max_threads":...}, ...]. New reference; caller decrefs. */
json_t *cudac_kernels_json(const struct elf_kernels *ks);

/* The compiler path o selects: "split" or "nvcc" (static strings), or NULL
 * with e for an unknown name (o->compiler or $KA_CUDA_COMPILER). */
const char *cudac_compiler(const struct cudac_opts *o, struct ka_err *e);

/* The nvcc version line ("release 13.0, V13.0.88") or NULL if nvcc cannot be
 * run; static storage, computed once. */
const char *cudac_nvcc_version(const char *nvcc);

/* Check the #include lines of src: absolute paths, "..", macro includes and
 * headers outside the allowed set (toolkit headers, C/C++ standard headers,
 * ka_kernel.h, and the headers of the libraries in libs) are refused. 0, or -1
 * with why (cap bytes) naming the include and its line. */
int cudac_check_includes(const char *src, size_t len, const char *const *libs, char *why,
			 size_t cap);

#endif
