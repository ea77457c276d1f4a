// col_sum, eager baseline: torch.sum(x, dim=0) as PyTorch eager runs it:
// ATen's reduce kernel with the reduced dimension outer (bank/lib/eager.cuh
// col_reduce: threads along the columns, row slices combined in shared
// memory, the rows split over grid.y into a workspace when there are few
// columns, and a combine launch).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [C] fp32.
	long long R = a->params[0], C = a->params[1];
	void *ws = ka_workspace(ka::col_reduce_ws<ka::sum_op>(C));
	if (!ws)
		return -1;
	return ka::col_reduce((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, R, C, ka::sum_op{1.f}, ws,
			      stream);
}
