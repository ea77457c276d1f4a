// softmax_rows, compiled baseline: torch.softmax(x, dim=-1) as torch.compile
// produces it: one fused kernel per row (bank/lib/compiled.cuh row_two_pass)
// with Inductor's online softmax reduction (running max m and sum s of
// exp(x - m), rescaled when m grows), then y = exp(x - m) / s. Rows up to
// 8192 floats stay in registers (persistent reduction: x read once).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct softmax_epi {
	__device__ float operator()(float x, ka::online_t a, long long, long long) const
	{
		return expf(x - a.m) / a.s;
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C]; output y [R, C].
	return ka::row_two_pass((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, a->params[0],
				a->params[1], ka::online_softmax_op(), softmax_epi(), stream);
}
