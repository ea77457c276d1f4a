// embedding_gather, compiled baseline: F.embedding(idx, weight) as
// torch.compile produces it: one pointwise kernel over y's elements that
// loads idx[i / D] and then weight[idx * D + i % D] (Inductor's indirect
// load; bank/lib/compiled.cuh generate).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct gather_f {
	const long long *idx;
	const float *w;
	long long D;
	__device__ float operator()(long long i) const { return w[idx[i / D] * D + i % D]; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, V, D; inputs idx [N] int64, weight [V, D] fp32; output y [N, D] fp32.
	long long N = a->params[0], D = a->params[2];
	return ka::generate((float *)a->outputs[0].ptr, N * D,
			    gather_f{(const long long *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr, D}, stream);
}
