// gelu_tanh, eager baseline: F.gelu(x, approximate='tanh') as PyTorch eager runs it:
// 1 launch of the vectorized elementwise kernel (bank/lib/eager.cuh): gelu_tanh_f.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

struct gelu_tanh_f {
	__device__ float operator()(float v) const { return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v))); }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] fp32.
	long long n = a->params[0] * a->params[1];
	const float *x = (const float *)a->inputs[0].ptr;
	float *y = (float *)a->outputs[0].ptr;
	return ka::unary(x, y, n, gelu_tanh_f(), stream);
}
