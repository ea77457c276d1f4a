/* cudaplan.h: nvcc's phases as a plan of steps for the split CUDA compile
 * (docs/compile.md). `nvcc --dryrun` with ka's fixed flags prints the
 * commands nvcc would run, one after another: the host compiler's
 * preprocessor (once per device architecture and once for the host),
 * cudafe++ (the host half), cicc (the device front end and optimizer, once
 * per architecture), ptxas, fatbinary, the host compiler on cudafe++'s
 * output, and the link. cudaplan_parse reads that text into steps with the
 * dependencies their files imply, changed only where running them in
 * parallel needs it:
 *
 *  - the module id, which cudafe++ would write and cicc read (so cicc waited
 *    for cudafe++), is written by the caller before the run and read by both;
 *  - the fat binary goes into its own object (fatbin.o, assembled from
 *    fatbin.s that the caller writes) instead of being #included into the
 *    host code, so the host compile does not wait for ptxas;
 *  - each preprocessor run writes its dependency list (deps-N.d);
 *  - cudafe++ gets GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (transparent huge
 *    pages for its heap: a third of its time was page faults);
 *  - the host compile may read cudafe++'s output through a precompiled
 *    prefix (ka-cudaphases' pchprefix);
 *  - the host compile writes its assembler file (-S, as -save-temps kept it)
 *    and a step of its own assembles it, as the compiler's driver would
 *    have: the driver's separate preprocessor run, which -save-temps asks
 *    for, goes (docs/compile.md, section 3, item 9);
 *  - with fork servers, the host compile may start once the stub's cicc
 *    has written the stub, before that cicc ends (ka-cudaphases' early, the
 *    shim's KA_FORK_STUB: docs/compile.md, section 7.5).
 *
 * Every other argument is nvcc's, so every phase reads and writes what it
 * would under nvcc, and the plan order is nvcc's order (the first failing
 * step in that order gives the log nvcc would print). Anything the parser
 * does not recognise (a phase it does not know, a missing dependency) makes
 * it fail, and the caller compiles with nvcc instead. No I/O here. */
#ifndef KA_CUDAPLAN_H
#define KA_CUDAPLAN_H

#include <stdint.h>

#include "util.h"

#define CUDAPLAN_MAX 24	    /* steps */
#define CUDAPLAN_MAX_DEPS 6 /* dependencies of one step */
#define CUDAPLAN_MAX_ENV 32 /* variables nvcc sets for its phases */
#define CUDAPLAN_FATBIN_O "fatbin.o"
#define CUDAPLAN_FATBIN_S "fatbin.s"

enum cudaphase_kind {
	CUDAPHASE_CPP,	  /* host compiler -E */
	CUDAPHASE_CUDAFE, /* cudafe++ */
	CUDAPHASE_CICC,	  /* cicc */
	CUDAPHASE_PTXAS,  /* ptxas */
	CUDAPHASE_FATBIN, /* fatbinary */
	CUDAPHASE_AS,	  /* as: fatbin.s -> fatbin.o (added) */
	CUDAPHASE_HOSTCC, /* host compiler -c on cudafe++'s output (-S: host as) */
	CUDAPHASE_LINK,	  /* host compiler -shared */
	CUDAPHASE_HOSTAS, /* as: the host compile's .s -> .o (added) */
};

struct cudaphase {
	enum cudaphase_kind kind;
	char **argv; /* owned, NULL-terminated */
	int argc;
	int deps[CUDAPLAN_MAX_DEPS]; /* earlier steps */
	int n_deps;
	const char *senv;  /* NAME=VALUE for this step only, or NULL */
	const char *input; /* HOSTCC: the file it compiles (an argv entry) */
	char name[48];	   /* "cicc compute_90a", for logs and reports */
};

struct cudaplan {
	struct cudaphase ph[CUDAPLAN_MAX];
	int n;
	char *env[CUDAPLAN_MAX_ENV]; /* owned "NAME=VALUE" */
	int n_env;
	char *module_id_file; /* owned; relative to the work folder */
	char *fatbin;	      /* owned; fatbinary's --create file */
	char *fatbin_c;	      /* owned; the wrapper the host code #includes */
	char *src_dir;	      /* owned; the folder the dryrun ran in */
	int stub_step;	      /* the cicc that writes the host code's stub */
	const char *stub;     /* its --stub_file_name (an argv entry of it) */
};

/* Parse dryrun (nvcc --dryrun's stderr, run in folder src_dir) into p. 0, or
 * -1 with e naming what is not understood. Free p with cudaplan_free (also
 * after a failure). */
int cudaplan_parse(const char *dryrun, const char *src_dir, struct cudaplan *p, struct ka_err *e);

void cudaplan_free(struct cudaplan *p);

/* The ka-cudaphases plan text (tools/cudaphases.c) for a compile in folder
 * work: every argument naming src_dir/ names work/ instead; the steps' logs
 * are logs/K.log; pch_prefix (or NULL) is the precompiled prefix for the
 * host compile; fork_dir (or NULL) the folder of the fork servers (each
 * cicc and cudafe++ step names its server's socket there: a hash of the
 * step's environment and arguments, the folder left out); jobs and mem as
 * ka-cudaphases takes them; target -1 for every step, else only step target
 * and the steps it needs. Returns the text (caller frees), or NULL with e
 * when a path holds a newline. */
char *cudaplan_text(const struct cudaplan *p, const char *work, const char *pch_prefix,
		    const char *fork_dir, int jobs, uint64_t mem, int limit_s, int target,
		    struct ka_err *e);

/* The serving plan text (ka-cudaphases, docs/compile.md section 7) that
 * starts, in folder work, a fork server for every cicc and cudafe++ step
 * (with the steps they need: the preprocessor runs): they run on the source
 * work/candidate.cu, which starts with the text sentinel; each server's
 * input is cut where that source's part begins, and it listens in work on
 * the socket cudaplan_text names for the step. shim: ka-forkshim.so; mem:
 * the memory budget. NULL with e when a path holds a newline or no step can
 * be served. */
char *cudaplan_serve_text(const struct cudaplan *p, const char *work, const char *shim,
			  const char *sentinel, uint64_t mem, struct ka_err *e);

/* A one-step plan text: the host compile's command turned into the one that
 * precompiles header (a prefix of cudafe++'s output) into gch: the same
 * flags, so that the host compile can use it (-x c++-header; no -c,
 * -save-temps). NULL with e as above. */
char *cudaplan_pch_text(const struct cudaplan *p, const char *work, const char *header,
			const char *gch, uint64_t mem, struct ka_err *e);

/* The index of the first step of kind k, or -1. */
int cudaplan_find(const struct cudaplan *p, enum cudaphase_kind k);

/* The link step links with the linker `-fuse-ld=name` names (the host
 * compiler's driver runs ld.<name>) instead of the default ld.bfd; the
 * caller checks that ld.<name> exists. A no-op without a link step. */
void cudaplan_fuse_ld(struct cudaplan *p, const char *name);

#endif
