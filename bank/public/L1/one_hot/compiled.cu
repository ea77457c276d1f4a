// one_hot, compiled baseline: F.one_hot(idx, C) as torch.compile produces
// it: Inductor decomposes one_hot into idx.unsqueeze(-1) == arange(C), one
// pointwise kernel over y that loads idx[i / C] (bank/lib/compiled.cuh
// generate, 16-byte stores).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct onehot_f {
	const long long *idx;
	long long C;
	__device__ long long operator()(long long i) const { return idx[i / C] == i % C ? 1ll : 0ll; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, C; input idx [N] int64; output y [N, C] int64.
	long long N = a->params[0], C = a->params[1];
	return ka::generate((long long *)a->outputs[0].ptr, N * C, onehot_f{(const long long *)a->inputs[0].ptr, C},
			    stream);
}
