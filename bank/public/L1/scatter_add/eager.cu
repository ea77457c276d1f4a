// scatter_add, eager baseline: src.new_zeros(V, D).index_add_(0, idx, src)
// as PyTorch eager runs it: two launches, the zero fill of y (bank/lib/
// eager.cuh fill, the vectorized elementwise kernel) and ATen's index_add
// kernel for many indices (index_add_rows: indexFuncLargeIndex's grid-stride
// loop over the source elements, 32-bit offsets from three divisions, an
// atomicAdd into y's row idx[n]; notes.md).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, V, D; inputs idx [N] int64, src [N, D] fp32; output y [V, D] fp32.
	long long N = a->params[0], V = a->params[1], D = a->params[2];
	float *y = (float *)a->outputs[0].ptr;
	if (ka::fill(y, V * D, 0.f, stream))
		return -1;
	return ka::index_add_rows((const float *)a->inputs[1].ptr, (const long long *)a->inputs[0].ptr, y, N, V, D,
				  stream);
}
