// layer_norm, eager baseline: F.layer_norm(x, (C,), w, b, eps=1e-5) as PyTorch
// 2.11 eager runs it: ONE kernel, ATen's vectorized_layer_norm_kernel
// (bank/lib/norm.cuh ka::ln_eager): a block of 128 threads a row, float4
// loads, per-thread Welford (multiplying by 1/n), a block combine, then a
// second read of the row (from L2) writing w * (rstd * (x - mean)) + b.
// Expected time (bench R = 16384, C = 4096): one read of x and one write of y,
// 2 x 268 MB = 537 MB; PyTorch takes 180.6 us on the H200 (2.97 TB/s: 128
// threads a row keep fewer bytes in flight than a streaming kernel).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], w [C], b [C]; output y [R, C].
	return ka::ln_eager<float, false>((const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr,
					  (const float *)a->inputs[2].ptr, (float *)a->outputs[0].ptr,
					  a->params[0], a->params[1], 1e-5f, stream);
}
