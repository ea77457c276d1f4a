// rms_norm_bf16, compiled baseline: F.rms_norm(x, (C,), w, eps=1e-6) under
// torch.compile, as two kernels (bank/lib/compiled.cuh):
//   rstd[r] = rsqrt(sum_c x[r, c]^2 / C + 1e-6)   ka::fused_row_reduce: a
//       block a row, 16-byte loads, fp32 sum of squares, the rsqrt epilogue;
//   y = x * rstd[r] * w[c]                        ka::pointwise: 16-byte
//       vectors, fp32 math rounded once to bf16, the row and column from a
//       fast division (Triton divides by the static C = 4096 with a shift).
// Why two kernels, not one fused reduction: torch.compile takes 97.3 us here,
// slower than eager's one fused kernel (82.6 us), and 97.3 us is the time of
// two reads of x plus one write of y (402 MB at 4.1 TB/s, the rate Inductor's
// one-kernel add + rms_norm (537 MB in 127.6 us) and layer_norm (537 MB in
// 128.8 us) reach); one fused pass would move 268 MB (about 65 us).
// Expected time (bench R = 16384, C = 4096): 134 MB + 268 MB at ~4 TB/s, ~100 us.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

typedef __nv_bfloat16 bf;

struct rstd_epi { // rsqrt(mean of squares + eps)
	float inv_c;
	__device__ float operator()(float ss, long long) const { return rsqrtf(ss * inv_c + 1e-6f); }
};

struct apply_f { // x * rstd[row] * w[col]
	const float *rstd;
	const bf *w;
	ka::fast_div by_c;
	__device__ float operator()(float v, long long i) const
	{
		long long r = by_c.div(i);
		return v * rstd[r] * ka::to_f(w[i - r * by_c.d]);
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], w [C]; output y [R, C].
	long long R = a->params[0], C = a->params[1];
	const bf *x = (const bf *)a->inputs[0].ptr;
	float *rstd = (float *)ka_workspace((size_t)R * sizeof(float));
	if (!rstd)
		return -1;
	if (ka::fused_row_reduce(x, rstd, R, C, ka::sumsq_op(), rstd_epi{1.f / (float)C}, stream))
		return -1;
	apply_f f = {rstd, (const bf *)a->inputs[1].ptr, ka::make_fast_div(C, R * C)};
	return ka::pointwise(x, (bf *)a->outputs[0].ptr, R * C, f, stream);
}
