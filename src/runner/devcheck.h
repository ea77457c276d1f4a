/* devcheck.h: the CUDA runner's device check (runner protocol 2, op
 * "check"; docs/grader.md "The gold's cost"): a slot's outputs, as its last
 * call left them, compared element by element with the task's fp64 gold,
 * computed on the device by a trusted module the parent built from the
 * task's ref.c (kernel ka_gold, one thread per item, double outputs; bank.h
 * bank_cuda_gold_source). The comparison is src/common/cmp.h's, the same
 * rule as the parent's. Only trusted code runs here: the gold module and the
 * compare kernels; the candidate's kernels have finished, and its inputs
 * were verified to be the generated ones (runner_slot.check_inputs).
 *
 * Not here: the request loop (runner.c), the slot's buffers (run_cuda.cu
 * hands their device pointers in). CUDA C++ only. */
#ifndef KA_DEVCHECK_H
#define KA_DEVCHECK_H

#include <cuda.h>

extern "C" {
#include "runner.h"
}

/* The device side of one check: the slot's buffers. */
struct devcheck_tensors {
	int n_inputs, n_outputs;
	CUdeviceptr in[RUNNER_MAX_TENSORS], out[RUNNER_MAX_TENSORS];
	int out_dtype[RUNNER_MAX_TENSORS];
	int64_t out_numel[RUNNER_MAX_TENSORS];
};

/* Run c on stream st: load (or find loaded) c->cubin's ka_gold and check
 * its parameter layout (n, the parameters, the inputs, the outputs, each 8
 * bytes), compute the gold of every item into a double buffer per output,
 * compare every element, find the lowest-index mismatches, gather the gold
 * at c's sampled elements. Fills res (gold_at malloc'd). 0, or -1 with e. */
int devcheck_run(CUstream st, const struct runner_check *c, const struct devcheck_tensors *t,
		 struct runner_check_result *res, struct ka_err *e);

/* Release the modules and buffers (at exit). */
void devcheck_release(void);

#endif
