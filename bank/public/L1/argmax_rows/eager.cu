// argmax_rows, eager baseline: torch.argmax(x, dim=-1) as PyTorch eager runs it: one launch of
// ATen's reduce kernel along the contiguous dimension (bank/lib/eager.cuh
// row_reduce with reduce_kernel<512, 1>'s config: at C > 8160 a
// 512-thread block a row, one float4 a thread an iteration, 4 accumulators).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R] int64.
	long long R = a->params[0], C = a->params[1];
	return ka::row_reduce((const float *)a->inputs[0].ptr, (long long *)a->outputs[0].ptr, R, C, ka::argmax_op(), stream);
}
