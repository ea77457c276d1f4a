// mish, compiled baseline: F.mish(x) as torch.compile produces it: the
// whole chain in one fused pointwise kernel (bank/lib/compiled.cuh), one read
// of x and one write of y.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct chain_f {
	__device__ float operator()(float v, long long) const { return v * tanhf(log1pf(expf(-fabsf(v))) + fmaxf(v, 0.0f)); }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] fp32.
	long long n = a->params[0] * a->params[1];
	return ka::pointwise((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, n, chain_f(), stream);
}
