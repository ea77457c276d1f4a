/* frontier.h: validation of a proposed task for track 5, the co-evolving
 * frontier (docs/frontier.md). Everything a proposer writes is hostile: this
 * module parses its reply, checks the reference's dialect over its tokens,
 * runs the task's gold in a confined child (never in ka itself) and checks
 * novelty against other tasks. It knows nothing of models, rounds or grading
 * (track_frontier.c). */
#ifndef KA_FRONTIER_H
#define KA_FRONTIER_H

#include <stddef.h>

#include "task.h"
#include "util.h"

#define FRONTIER_BLOCK_MAX (256u << 10) /* bytes of one fenced block kept */

/* A proposer's reply split into its fenced blocks: the last ```json block is
 * task.json, the last ```c block ref.c, the last ```cuda or ```opencl block
 * the (optional) baseline (baseline_cuda / baseline_opencl: the last
 * ```cuda / ```opencl block, for the grader of that target). All owned (frontier_proposal_free). */
struct frontier_proposal {
	char *task_json, *ref_c, *baseline;
	char *baseline_cuda, *baseline_opencl; /* the last block of each language */
};

/* Parse reply into p. 0, or -1 with why (cap bytes): no task.json or ref.c
 * block, or a block over FRONTIER_BLOCK_MAX. p is always fit for
 * frontier_proposal_free. */
int frontier_parse(const char *reply, struct frontier_proposal *p, char *why, size_t cap);
void frontier_proposal_free(struct frontier_proposal *p);

/* The reference dialect, checked over the tokens of src (comments removed):
 * the only preprocessor line is #include "ka_ref.h"; no while, do, goto,
 * asm, __attribute__, extern, static, typedef, struct, union, _Pragma or
 * __builtin_*; every `for` has a condition that compares its loop variable
 * and a step that changes it (a bound the checker can see); no pointer
 * declarations, casts to pointers, address-of or -> (the tensors of the
 * signature, and KA_IN/KA_OUT views into them, are the only pointers); no call but the
 * math functions of the dialect and the KA_ load/store macros. 0 when it
 * passes, else 1 with why naming the token and its line. */
int frontier_dialect_check(const char *src, char *why, size_t cap);

/* Confine the calling process before a proposed reference's gold runs:
 * Landlock (where the kernel has it) to the system's libraries, /proc/self
 * and /dev/null, read-only; the seccomp filter of lockdown.h. Irreversible:
 * only the gold child (or a test's child) calls it. 0, or -1 with why. */
int frontier_gold_lockdown(char *why, size_t cap);

/* Validate the task in dir in a confined child process (a proposed ref.c is
 * hostile: its gold is never loaded by the caller): the child puts itself in
 * its own process group with PR_SET_NO_NEW_PRIVS, dies with its parent, gets
 * rlimits on address space (4 GiB), CPU time, file size and core dumps, and
 * runs bank_validate (schema; ref.c compiled, jailed, as C, as OpenCL C when
 * clc is given and as CUDA when nvcc is; gold on every check shape: finite,
 * not all zero, not constant, every input matters), the gold under
 * frontier_gold_lockdown once the compilers are done. The parent kills the
 * child's group after wall_s seconds. Returns 0 (passed), 1 (degenerate),
 * 2 (bad input: schema or compile), 3 (ran over wall_s or killed by a
 * signal); line gets the validator's line or the reason. The compiles
 * (C, OpenCL C, CUDA) all run before the gold: *compile_s gets their wall
 * seconds, *gold_s the gold run's (gold and degenerate checks). */
int frontier_gold_confined(const char *dir, const char *clc, const char *nvcc, double wall_s,
			   char *line, size_t cap, double *compile_s, double *gold_s);

/* The benchmark shape's roofline time in seconds: max(min_bytes / bw,
 * min_flops / flops) at t->bench. -1 when it does not evaluate. */
double frontier_roofline_s(const struct ka_task *t, double bw, double flops);

/* Novelty: t against others[0..n-1] (same name, same normalised ref.c or
 * same normalised torch expression, bank_dup.h). 0 when novel, else 1 with
 * why naming the clash and the other task's name and label (e.g.
 * "frontier", "held-out"). */
int frontier_novel(const struct ka_task *t, struct ka_task *const *others, int n, const char *label,
		   char *why, size_t cap);

#endif
