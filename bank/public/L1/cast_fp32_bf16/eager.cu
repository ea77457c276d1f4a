// cast_fp32_bf16, eager baseline: x.to(torch.bfloat16) as PyTorch eager runs it:
// 1 launch of the vectorized elementwise kernel (bank/lib/eager.cuh): copy_f.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

struct copy_f {
	__device__ float operator()(float v) const { return v; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] bf16.
	long long n = a->params[0] * a->params[1];
	const float *x = (const float *)a->inputs[0].ptr;
	__nv_bfloat16 *y = (__nv_bfloat16 *)a->outputs[0].ptr;
	return ka::unary(x, y, n, copy_f(), stream);
}
