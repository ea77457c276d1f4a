// one_hot, eager baseline: F.one_hot(idx, C) as PyTorch eager runs it on
// CUDA: at::zeros of the [N, C] int64 result (bank/lib/eager.cuh fill, the
// vectorized elementwise kernel) and then ret.scatter_(-1, idx.unsqueeze(-1),
// 1) (scatter_value_rows: one thread per index writes its 1). With C given,
// PyTorch skips the min/max checks of idx on CUDA.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, C; input idx [N] int64; output y [N, C] int64.
	long long N = a->params[0], C = a->params[1];
	long long *y = (long long *)a->outputs[0].ptr;
	if (ka::fill(y, N * C, 0ll, stream))
		return -1;
	return ka::scatter_value_rows((const long long *)a->inputs[0].ptr, y, N, C, 1ll, stream);
}
