// cast_bf16_fp32, eager baseline: x.to(torch.float32) as PyTorch eager runs it:
// 1 launch of the dynamic-casting unrolled kernel (bank/lib/eager.cuh
// unary_dyncast: ATen has no vectorized special case for bf16 -> fp32, so its
// copy loads and stores through LoadWithCast / StoreWithCast): copy_f.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

struct copy_f {
	__device__ float operator()(float v) const { return v; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] bf16; output y [R, C] fp32.
	long long n = a->params[0] * a->params[1];
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)a->inputs[0].ptr;
	float *y = (float *)a->outputs[0].ptr;
	return ka::unary_dyncast(x, y, n, copy_f(), stream);
}
