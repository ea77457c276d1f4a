/* cudasplit.h: the split CUDA compile, the default path of cudac.c
 * (docs/compile.md). The same phases nvcc runs, with nvcc's own arguments
 * (cudaplan.h reads them from `nvcc --dryrun`), run by ka-cudaphases inside
 * the compile jail: independent phases in parallel (the device half beside
 * the host half), the module id written up front so cicc need not wait for
 * cudafe++, the fat binary in its own object so the host compile need not
 * wait for ptxas, and the host compiler reading the part of cudafe++'s
 * output that every candidate shares (the force-included cuda_runtime.h)
 * from a precompiled header kept in the cache folder. Each phase reads the
 * bytes it would read under nvcc, so the device code (PTX, cubin, fat
 * binary) is nvcc's byte for byte, and the log of a failed compile is what
 * nvcc would print: the outputs of the phases, in nvcc's order, up to the
 * first that failed.
 *
 * Never runs candidate code; the phases run jailed like nvcc (files,
 * environment, time; memory: the budget is shared by the phases running
 * together, and a phase that may have failed for want of memory runs again
 * alone with all of it). */
#ifndef KA_CUDASPLIT_H
#define KA_CUDASPLIT_H

#include <stdint.h>

#include "util.h"

/* What one split compile did, for reports. */
struct cudasplit_stats {
	int pch;		 /* the host compile read the precompiled prefix */
	int forked;		 /* phases a fork server ran (cudafork.h) */
	int early;		 /* phases that stand on an early start (the host
				  * compile on the early stub: docs/compile.md 7.5) */
	int steps;		 /* phases run */
	double phase_ms[24];	 /* each phase's wall time, in nvcc's order (-1: not run) */
	double phase_cpu_ms[24]; /* and its user + system CPU time */
	double phase_at_ms[24];	 /* and its start, after the driver's */
	double driver_ms;	 /* the driver's run, jail included */
	double total_ms;	 /* the whole split compile */
	char phase_name[24][48];
};

/* Make the split path ready for nvcc_argv (nvcc's full command line as
 * cudac.c runs it, on candidate.cu in a work folder) under cache_dir: read
 * nvcc's plan once per process and command line, and build the precompiled
 * prefix once per cache folder (in a jail; limit_s for it). Returns 0, or
 * -1 with e saying why the split path cannot be used (the caller compiles
 * with nvcc). Thread-safe. */
int cudasplit_prepare(char *const *nvcc_argv, const char *cache_dir, double limit_s,
		      struct ka_err *e);

/* Start the fork servers for nvcc_argv's plan now (cudafork.h), for a
 * caller about to compile many sources; nothing when KA_CUDA_FORKSRV is off
 * or the split path cannot be used. Thread-safe. */
void cudasplit_serve(char *const *nvcc_argv, const char *cache_dir);

/* Compile work/candidate.cu (a folder made as for nvcc: the source,
 * include/ka_kernel.h, keep/) with the plan cudasplit_prepare made for
 * nvcc_argv, with module id string module_id, under the wall-clock limit
 * limit_s. On return 0, rr holds what nvcc's run would: code (0, the
 * failing phase's status, or 124 when over the limit) and out (the log,
 * capped at out_cap bytes, out_truncated set when cut); work/candidate.so,
 * work/deps.d and, when nvcc would have run the host compile, keep/ *.s are
 * there as nvcc leaves them. -1 with e: a failure of ka (no plan, the jail,
 * the step runner), never the candidate's. */
int cudasplit_compile(char *const *nvcc_argv, const char *cache_dir, const char *work,
		      const char *module_id, double limit_s, size_t out_cap,
		      struct util_run_result *rr, struct cudasplit_stats *st, struct ka_err *e);

/* The module id for a source with hash h: nvcc's form for candidate.cu
 * ("_xxxxxxxx_12_candidate_cu_xxxxxxxx"), into out (cap >= 40). */
void cudasplit_module_id(uint64_t h, char *out, size_t cap);

#endif
