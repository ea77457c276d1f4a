// scatter_add, compiled baseline: src.new_zeros(V, D).index_add_(0, idx, src)
// as torch.compile produces it: Inductor lowers index_add_ to an
// accumulating index_put, two kernels: a pointwise fill of zeros (bank/lib/
// compiled.cuh generate) and a pointwise scatter over src's elements
// (compiled.cuh scatter_add_rows: 1024 elements a block, 16-byte loads of
// src, the row by a constant division, an atomic add each; notes.md).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct zero_f {
	__device__ float operator()(long long) const { return 0.f; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, V, D; inputs idx [N] int64, src [N, D] fp32; output y [V, D] fp32.
	long long N = a->params[0], V = a->params[1], D = a->params[2];
	float *y = (float *)a->outputs[0].ptr;
	if (ka::generate(y, V * D, zero_f(), stream))
		return -1;
	return ka::scatter_add_rows((const float *)a->inputs[1].ptr, (const long long *)a->inputs[0].ptr, y, N, V, D,
				    stream);
}
