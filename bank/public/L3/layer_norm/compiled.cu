// layer_norm, compiled baseline: F.layer_norm(x, (C,), w, b, eps=1e-5) under
// torch.compile: ONE fused kernel (bank/lib/norm.cuh ka::ln_looped,
// Inductor's looped Welford reduction with the affine epilogue): a block of
// 256 threads a row, 2048 elements an iteration (two float4 a thread, both
// loads issued first), Welford with a true division, a block combine, then a
// second loop reading x (from L2), w and b and writing (x - mean) * rstd * w + b.
// Expected time (bench R = 16384, C = 4096): 537 MB (x read, y written once
// from DRAM); torch.compile takes 128.8 us on the H200 (4.17 TB/s).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], w [C], b [C]; output y [R, C].
	return ka::ln_looped((const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr,
			     (const float *)a->inputs[2].ptr, (float *)a->outputs[0].ptr, a->params[0],
			     a->params[1], 1e-5f, stream);
}
