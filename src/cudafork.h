/* cudafork.h: the fork servers of the split CUDA compile (docs/compile.md,
 * section 7). cicc (twice) and cudafe++ spend most of their time parsing
 * the ~1.2 MB of preprocessed headers (the force-included cuda_runtime.h)
 * that start every candidate's input. A fork server is one of these tools,
 * run by ka-cudaphases with tools/forkshim.c preloaded on a file holding
 * only that prefix: at its end it stops and forks a child per request,
 * which continues on the candidate's input from there, in the candidate's
 * folder, under the step's limits, and writes what a fresh run writes.
 *
 * Per nvcc plan and ka process, the servers run in a jail of their own (the
 * compile jail's rules, their folder read-write: the spool, in the cache
 * folder) for the life of the process; each compile names the spool in its
 * plan (ka-cudaphases' forkdir), binds it read-only into its own jail and
 * connects to the sockets there. A compile never waits for them: until they
 * are ready, and whenever they refuse or fail, its steps run as usual.
 *
 * KA_CUDA_FORKSRV (ka's environment) chooses when they start: "auto" (or
 * unset) at the second compile with a plan, or when many compiles are about
 * to run (cudafork_start), since a single compile cannot gain from them;
 * "on" at the first; "off" never. Thread-safe; the servers stop when the
 * process exits. */
#ifndef KA_CUDAFORK_H
#define KA_CUDAFORK_H

#include "cudaplan.h"

/* For one compile with plan p (of nvcc, kept by the caller for the life of
 * the process): counts the compile, starts the servers when KA_CUDA_FORKSRV
 * says so, and writes their folder (for the compile's plan) into dir (cap
 * bytes). Returns 1 when it did, 0 when there are none (not started,
 * stopped for good, or this machine cannot run them). driver is
 * ka-cudaphases (ka-forkshim.so lies beside it); cache_dir holds the spool. */
int cudafork_dir(const struct cudaplan *p, const char *nvcc, const char *driver,
		 const char *cache_dir, char *dir, size_t cap);

/* Start the servers of plan p now, unless KA_CUDA_FORKSRV is off or they
 * run already: for a caller about to compile many sources. */
void cudafork_start(const struct cudaplan *p, const char *nvcc, const char *driver,
		    const char *cache_dir);

#endif
