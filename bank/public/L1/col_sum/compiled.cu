// col_sum, compiled baseline: torch.sum(x, dim=0) as torch.compile produces
// it: Inductor's split reduction over the outer dimension (bank/lib/
// compiled.cuh fused_col_reduce: partial sums of row slices into a
// workspace, then a small combine kernel applying the epilogue, here none).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct epi_f {
	__device__ float operator()(float a, long long) const { return a; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [C] fp32.
	long long R = a->params[0], C = a->params[1];
	void *ws = ka_workspace(ka::col_reduce_ws<ka::sum_op>(C));
	if (!ws)
		return -1;
	return ka::fused_col_reduce((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, R, C, ka::sum_op{1.f},
				    epi_f(), ws, stream);
}
