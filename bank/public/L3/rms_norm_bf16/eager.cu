// rms_norm_bf16, eager baseline: F.rms_norm(x, (C,), w, eps=1e-6) as PyTorch
// 2.11 eager runs it on CUDA: ONE fused kernel (ATen's fused RMS norm, the
// vectorized_layer_norm_kernel with the RMS statistic: bank/lib/norm.cuh
// ka::ln_eager): a block of 128 threads a row, 4-element (8-byte) loads, the
// sum of squares in fp32, rstd = rsqrt(sum / C + 1e-6), then a second read of
// the row (from L2) writing w * (rstd * x) in fp32 rounded once to bf16.
// Expected time (bench R = 16384, C = 4096): one read of x and one write of y,
// 2 x 134 MB = 268 MB; PyTorch takes 82.6 us on the H200 (3.25 TB/s).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], w [C]; output y [R, C].
	typedef __nv_bfloat16 bf;
	return ka::ln_eager<bf, true>((const bf *)a->inputs[0].ptr, (const bf *)a->inputs[1].ptr, NULL,
				      (bf *)a->outputs[0].ptr, a->params[0], a->params[1], 1e-6f, stream);
}
