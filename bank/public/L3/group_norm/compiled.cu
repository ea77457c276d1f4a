// group_norm, compiled baseline: F.group_norm(x, 32, w, b, eps=1e-5) under
// torch.compile: Inductor's Welford reduction over each (sample, group) of
// CG * HW values, then one fused pointwise kernel for the normalisation and
// the affine (bank/lib/norm.cuh, bank/lib/compiled.cuh):
//   mean, rstd [N * 32]  ka::row_moments (vector form): a block of 512
//        threads a group, two float4 loads a thread an iteration, Welford
//        with a true division (Triton's welford_reduce), a block combine;
//   y = (x - mean[g]) * rstd[g] * w[c] + b[c]   ka::pointwise: float4
//        vectors, fp32, the group and channel from fast divisions (Triton
//        divides by the static CG * HW and HW with shifts).
// Expected time (bench N = 32, CG = 16, HW = 4096: x is 268 MB): x read twice,
// y written once, 805 MB; torch.compile takes 203.7 us on the H200 (3.95 TB/s).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

struct gn_apply {
	const float *mean, *rstd, *w, *b;
	ka::fast_div by_group, by_hw, by_c; // CG * HW, HW, C
	__device__ float operator()(float v, long long i) const
	{
		long long g = by_group.div(i), c = by_c.mod(by_hw.div(i));
		return (v - mean[g]) * rstd[g] * w[c] + b[c];
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, CG, HW; inputs x [N, 32*CG, HW], w, b [32*CG]; output y.
	long long N = a->params[0], CG = a->params[1], HW = a->params[2], C = 32 * CG, NG = N * 32;
	long long n = N * C * HW;
	float *ws = (float *)ka_workspace((size_t)(2 * NG) * sizeof(float));
	if (!ws)
		return -1;
	const float *x = (const float *)a->inputs[0].ptr;
	if (ka::row_moments(x, ws, ws + NG, NG, CG * HW, 1e-5f, true, stream))
		return -1;
	gn_apply f = {ws,
		      ws + NG,
		      (const float *)a->inputs[1].ptr,
		      (const float *)a->inputs[2].ptr,
		      ka::make_fast_div(CG * HW, n),
		      ka::make_fast_div(HW, n),
		      ka::make_fast_div(C, N * C)};
	return ka::pointwise(x, (float *)a->outputs[0].ptr, n, f, stream);
}
