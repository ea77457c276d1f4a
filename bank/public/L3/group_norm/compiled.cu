// group_norm, compiled baseline: F.group_norm under torch.compile: one fused
// kernel per (n, g): Welford reduction, then the affine epilogue.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, CG, HW; inputs x, w, b; output y.
	long long N = a->params[0], CG = a->params[1], HW = a->params[2];
	attn::group_norm_fused<float><<<(unsigned)(N * 32), 1024, 0, stream>>>(
		(const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr,
		(const float *)a->inputs[2].ptr, (float *)a->outputs[0].ptr, CG * HW, HW, 32 * CG, CG, 1e-5f);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
