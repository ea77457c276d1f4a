// gelu_bias_scale, compiled baseline: torch.nn.functional.gelu(x * scale + bias)
// as torch.compile produces it: the whole chain in one fused pointwise kernel
// (bank/lib/compiled.cuh): one read of x, one write of y, scale and bias read
// through the cache.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct chain_f {
	const float *scale, *bias;
	long long C;
	__device__ float operator()(float x, long long i) const
	{
		long long c = i % C;
		float v = x * scale[c] + bias[c];
		return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], scale [C], bias [C]; output y.
	long long R = a->params[0], C = a->params[1];
	chain_f f = {(const float *)a->inputs[1].ptr, (const float *)a->inputs[2].ptr, C};
	return ka::pointwise((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, R * C, f, stream);
}
