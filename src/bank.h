/* bank.h: task banks (folders of task folders) and their validation.
 * A bank is a folder searched two levels deep for task folders (folders
 * holding task.json), e.g. bank/public/L1/<task>. Validation loads each task,
 * compiles its reference for every target this machine has (plain C via
 * gold_open, OpenCL C via ka-clc on PoCL, CUDA via nvcc), computes gold on
 * every check shape and rejects degenerate tasks. This module also builds
 * the standalone OpenCL C and CUDA sources of a task's reference, which the
 * grader reuses as its trusted baseline kernels. It does not time anything. */
#ifndef KA_BANK_H
#define KA_BANK_H

#include <stddef.h>
#include <stdint.h>

#include "task.h"
#include "util.h"

#define BANK_MAX_TASKS 4096

/* Task folders, sorted by path. Owned by the struct (bank_list_free). */
struct bank_list {
	int n;
	char **dirs;
};

/* The default bank: <util_data_root()>/bank/public (static string). */
const char *bank_default_path(void);

/* List the task folders of path: path itself if it holds task.json, else
 * every folder one or two levels below it that holds task.json. A folder
 * that does not exist or cannot be read is an error; an empty bank is not.
 * 0 or -1 with e. */
int bank_scan(const char *path, struct bank_list *out, struct ka_err *e);

/* Resolve command-line task arguments against a bank: each argument is a
 * task folder, a bank folder (all its tasks) or the folder name of a task in
 * bank (e.g. "gemm_bias_gelu"); no arguments means every task of bank.
 * Appends to out (zero it first). 0 or -1 with e ("no task 'x' in bank"; a
 * folder argument that holds no task is an error too). */
int bank_resolve(const char *bank, int argc, char **argv, struct bank_list *out, struct ka_err *e);

void bank_list_free(struct bank_list *l);

/* The file a model-written task's folder holds (the frontier track writes
 * it beside every proposal and accepted variant: docs/frontier.md). */
#define BANK_LINEAGE_FILE "lineage.json"

/* t comes from a bank the operator gave (ka grade --task, ka bank, ka gold,
 * the tracks' --bank): mark it trusted bank code (struct ka_task.trusted:
 * its gold runs in ka, its device gold on the GPU), unless its folder holds
 * BANK_LINEAGE_FILE: a proposer model wrote that ref.c, wherever the folder
 * now lies, so its gold stays confined (gold.h). Returns t->trusted. */
int bank_trust(struct ka_task *t);

/* Content hash of the bank at path: util_hash64 over "ka-bank", then each
 * task's name and task_hash, in the path order of bank_scan. It names what a
 * run was scored on (the scorecard's bank.hash): the same tasks give the same
 * hash wherever the bank lies, any change to a task changes it. *hash gets it;
 * *n_tasks (may be NULL) the number of tasks. 0, or -1 with e (a folder that
 * cannot be read, a task that does not load). */
int bank_content_hash(const char *path, uint64_t *hash, int *n_tasks, struct ka_err *e);

/* The same as 16 lowercase hex digits and a NUL in out (the form scorecards
 * and journals carry). 0 or -1 with e. */
int bank_content_hash_hex(const char *path, char out[17], int *n_tasks, struct ka_err *e);

/* A standalone OpenCL C program computing t's reference on the device:
 * include/ka_gen.h, include/ka_ref.h and ref.c inlined (their includes of
 * each other removed; #line directives keep error positions in ref.c), then
 *   __kernel void ka_ref_kernel(long n, long p_<param>...,
 *       __global const T *in_<input>..., __global T *out_<output>...)
 * with one work item per work item: global id i < n computes item i, where n
 * is the item count. T is the tensor's C type (dtype_ctype: fp16/bf16
 * are ushort bits). Returns a new string (free), or NULL if the headers
 * cannot be read under util_data_root()/include. */
char *bank_opencl_ref_source(const struct ka_task *t);

/* The same for CUDA: one .cu text with
 *   extern "C" __global__ void ka_ref_kernel(long long n, long long p_<param>...,
 *       const T *__restrict__ in_<input>..., T *__restrict__ out_<output>...)
 * one thread per item (i = blockIdx.x * blockDim.x + threadIdx.x, i < n).
 * It includes <string.h> through ka_gen.h's host path (fine for nvcc).
 * Returns a new string (free) or NULL as above. */
char *bank_cuda_ref_source(const struct ka_task *t);

/* Compile t's reference as CUDA device code with nvcc (jailed, sm_90a),
 * as bank_validate does. 0 when it compiles, else -1 with why (cap bytes)
 * naming ref.c and the compiler's summary. */
int bank_cuda_ref_check(const struct ka_task *t, const char *nvcc, char *why, size_t cap);

/* The device gold of t (src/devgold.c): the same source with KA_GOLD
 * defined first, so that every output is a double array and the math
 * functions take C's argument conversions (include/ka_ref.h), exactly the
 * CPU gold's computation; the kernel is
 *   extern "C" __global__ void ka_gold(long long n, long long p_<param>...,
 *                                      const T *in_<input>...,
 *                                      double *out_<output>...)
 * one thread per item. Malloc'd, or NULL when the headers cannot be read. */
char *bank_cuda_gold_source(const struct ka_task *t);

/* Outcome of validating one task. */
enum bank_verdict {
	BANK_VERDICT_OK = 0,	     /* every check passed */
	BANK_VERDICT_DEGENERATE = 1, /* loads and compiles, but fails a check of its data */
	BANK_VERDICT_BAD = 2,	     /* does not load or its reference does not compile */
};

/* The external compilers validation uses. An empty string turns a target
 * off; bank_tools_find fills the defaults. */
struct bank_tools {
	char clc[4096];	 /* ka-clc (beside the running program), "" if missing */
	char nvcc[4096]; /* $NVCC, nvcc on PATH or /usr/local/cuda/bin/nvcc, "" if missing */
	/* Optional: called once every compiler has run and before the first
	 * call of the reference's code (the frontier confines its gold child
	 * here); nonzero fails the validation with why. */
	int (*before_gold)(char *why, size_t cap);
};

void bank_tools_find(struct bank_tools *tools);

/* Validate the task in dir. Writes one line (no newline) saying what was
 * checked, or why it failed, into line (cap bytes) and returns the verdict.
 * Targets whose compiler or OpenCL platform is missing are skipped and the
 * line says so. */
enum bank_verdict bank_validate(const char *dir, const struct bank_tools *tools, char *line,
				size_t cap);

#endif
