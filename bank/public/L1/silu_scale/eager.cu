// silu_scale, eager baseline: F.silu(x) * 0.5 as PyTorch eager runs it:
// 2 launches of the vectorized elementwise kernel (bank/lib/eager.cuh): silu_f, mul_half_f, each intermediate a full fp32 [R, C] tensor in memory.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

struct silu_f {
	__device__ float operator()(float v) const { return v / (1.0f + expf(-v)); }
};
struct mul_half_f {
	__device__ float operator()(float v) const { return v * 0.5f; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] fp32.
	long long n = a->params[0] * a->params[1];
	const float *x = (const float *)a->inputs[0].ptr;
	float *y = (float *)a->outputs[0].ptr;
	size_t tbytes = ((size_t)n * sizeof(float) + 255) / 256 * 256;
	char *ws = (char *)ka_workspace(1 * tbytes);
	if (!ws)
		return -1;
	if (ka::unary(x, (float *)(ws + 0 * tbytes), n, silu_f(), stream))
		return -1;
	return ka::unary((const float *)(ws + 0 * tbytes), y, n, mul_half_f(), stream);
}
