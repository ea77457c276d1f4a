// softplus, eager baseline: F.softplus(x) as PyTorch eager runs it:
// 1 launch of the vectorized elementwise kernel (bank/lib/eager.cuh): softplus_f.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

struct softplus_f {
	__device__ float operator()(float v) const { return v > 20.0f ? v : log1pf(expf(v)); }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] fp32.
	long long n = a->params[0] * a->params[1];
	const float *x = (const float *)a->inputs[0].ptr;
	float *y = (float *)a->outputs[0].ptr;
	return ka::unary(x, y, n, softplus_f(), stream);
}
