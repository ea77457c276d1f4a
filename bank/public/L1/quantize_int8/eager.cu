// quantize_int8, eager baseline: torch.clamp(torch.round(x / scale), -128,
// 127).to(torch.int8) as PyTorch eager runs it: four launches (div, round,
// clamp, cast), each bank/lib/eager.cuh's vectorised unary kernel, the
// intermediates full fp32 tensors in workspace memory. The scalar 0.0625
// (the task's "scale") is a constant of the launch.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

namespace ka {
// The int8 store of the cast kernel (PyTorch: static_cast of the float).
template <> __device__ __forceinline__ signed char from_f<signed char>(float v) { return (signed char)v; }
}

struct div_f {
	__device__ float operator()(float v) const { return v / 0.0625f; }
};
struct round_f {
	__device__ float operator()(float v) const { return rintf(v); }
};
struct clamp_f {
	__device__ float operator()(float v) const { return fminf(fmaxf(v, -128.f), 127.f); }
};
struct id_f {
	__device__ float operator()(float v) const { return v; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] int8.
	long long n = a->params[0] * a->params[1];
	const float *x = (const float *)a->inputs[0].ptr;
	size_t tbytes = ((size_t)n * sizeof(float) + 255) / 256 * 256;
	char *ws = (char *)ka_workspace(2 * tbytes);
	if (!ws)
		return -1;
	float *t0 = (float *)ws, *t1 = (float *)(ws + tbytes);
	if (ka::unary(x, t0, n, div_f(), stream) || ka::unary((const float *)t0, t1, n, round_f(), stream) ||
	    ka::unary((const float *)t1, t0, n, clamp_f(), stream))
		return -1;
	return ka::unary((const float *)t0, (signed char *)a->outputs[0].ptr, n, id_f(), stream);
}
