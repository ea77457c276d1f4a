// gelu_bias_scale, eager baseline: torch.nn.functional.gelu(x * scale + bias)
// as PyTorch eager runs it, three launches of bank/lib/eager.cuh, each
// intermediate a full [R, C] tensor in memory (scratch from ka_workspace):
//   t1 = x * scale    (broadcast [C] over rows: the unrolled kernel)
//   t2 = t1 + bias    (same)
//   y  = gelu(t2)     (exact erf GELU in fp32: the vectorized kernel)
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

struct mul_f {
	__device__ float operator()(float a, float b) const { return a * b; }
};
struct add_f {
	__device__ float operator()(float a, float b) const { return a + b; }
};
struct gelu_f {
	__device__ float operator()(float v) const { return v * 0.5f * (1.0f + erff(v * 0.70710678118654752f)); }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], scale [C], bias [C]; output y.
	long long R = a->params[0], C = a->params[1], n = R * C;
	const float *x = (const float *)a->inputs[0].ptr;
	const float *scale = (const float *)a->inputs[1].ptr;
	const float *bias = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	size_t tbytes = ((size_t)n * sizeof(float) + 255) / 256 * 256; // 256-byte aligned like any allocation
	char *ws = (char *)ka_workspace(2 * tbytes);
	if (!ws)
		return -1;
	float *t1 = (float *)ws, *t2 = (float *)(ws + tbytes);
	if (ka::binary_bcast_row(x, scale, t1, n, C, mul_f(), stream) ||
	    ka::binary_bcast_row((const float *)t1, bias, t2, n, C, add_f(), stream))
		return -1;
	return ka::unary((const float *)t2, y, n, gelu_f(), stream);
}
