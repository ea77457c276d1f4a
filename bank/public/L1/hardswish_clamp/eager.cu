// hardswish_clamp, eager baseline: torch.clamp(F.hardswish(x), -0.25, 2.0) as PyTorch eager runs it:
// 2 launches of the vectorized elementwise kernel (bank/lib/eager.cuh): hardswish_f, clamp_f, each intermediate a full fp32 [R, C] tensor in memory.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

struct hardswish_f {
	__device__ float operator()(float v) const { return v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f; }
};
struct clamp_f {
	__device__ float operator()(float v) const { return fminf(fmaxf(v, -0.25f), 2.0f); }
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
	if (ka::unary(x, (float *)(ws + 0 * tbytes), n, hardswish_f(), stream))
		return -1;
	return ka::unary((const float *)(ws + 0 * tbytes), y, n, clamp_f(), stream);
}
