// row_var, compiled baseline: torch.var(x, dim=-1) as torch.compile produces it: one
// block per row looping over the row in vector chunks, a block reduction and
// the epilogue in the same kernel (bank/lib/compiled.cuh fused_row_reduce).
// The Welford step is Inductor's welford_reduce, whose `delta / weight` is
// Triton's fp32 division, div.full.f32 (ka::triton_welford_op), not the
// IEEE division nvcc emits for `/`.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct epi_f {
	long long C;
	__device__ float operator()(ka::welford_t a, long long) const { return a.m2 / (a.n - 1.f); }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R] fp32.
	long long R = a->params[0], C = a->params[1];
	return ka::fused_row_reduce((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, R, C, ka::triton_welford_op{},
				    epi_f{C}, stream);
}
