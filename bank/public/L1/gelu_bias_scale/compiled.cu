// gelu_bias_scale, compiled baseline: torch.nn.functional.gelu(x * scale + bias)
// as torch.compile produces it: the whole chain in one fused pointwise kernel
// (bank/lib/compiled.cuh ka::pointwise): one read of x, one write of y, scale
// and bias read through the cache. The column c = i % C comes from a 32-bit
// multiply-high division (bank/lib/intdiv.cuh), as cheap as Triton's `% 4096`
// on the static shape; a 64-bit `%` an element made this kernel compute-bound
// (48.4 us against torch.compile's 37.4 us).
// Expected time (bench R = C = 4096): 2 x 67 MB = 134 MB; torch.compile takes
// 37.4 us on the H200 (3.6 TB/s).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "intdiv.cuh"
#include "ka_kernel.h"

struct chain_f {
	const float *scale, *bias;
	ka::fast_div by_c;
	__device__ float operator()(float x, long long i) const
	{
		long long c = by_c.mod(i);
		float v = x * scale[c] + bias[c];
		return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], scale [C], bias [C]; output y.
	long long R = a->params[0], C = a->params[1];
	chain_f f = {(const float *)a->inputs[1].ptr, (const float *)a->inputs[2].ptr, ka::make_fast_div(C, R * C)};
	return ka::pointwise((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, R * C, f, stream);
}
