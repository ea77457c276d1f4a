// quantize_int8, compiled baseline: torch.clamp(torch.round(x / scale), -128,
// 127).to(torch.int8) as torch.compile produces it: one fused pointwise
// kernel (bank/lib/compiled.cuh pointwise) with the scalar 0.0625 baked in.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

namespace ka {
template <> __device__ __forceinline__ signed char from_f<signed char>(float v) { return (signed char)v; }
}

struct chain_f {
	__device__ float operator()(float v, long long) const
	{
		return fminf(fmaxf(rintf(v / 0.0625f), -128.f), 127.f);
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] int8.
	long long n = a->params[0] * a->params[1];
	return ka::pointwise((const float *)a->inputs[0].ptr, (signed char *)a->outputs[0].ptr, n, chain_f(),
			     stream);
}
