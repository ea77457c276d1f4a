// masked_fill, compiled baseline: x.masked_fill(mask, fill) as torch.compile
// produces it: one fused pointwise kernel over x that also loads the mask at
// the same index (bank/lib/compiled.cuh pointwise). The scalar -0.5 is
// baked in, as Inductor does.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct chain_f {
	const unsigned char *m;
	__device__ float operator()(float v, long long i) const { return m[i] ? -0.5f : v; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C] fp32, mask [R, C] bool; output y [R, C] fp32.
	long long n = a->params[0] * a->params[1];
	return ka::pointwise((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, n,
			     chain_f{(const unsigned char *)a->inputs[1].ptr}, stream);
}
