// group_norm, eager baseline: F.group_norm(x, 32, w, b, eps=1e-5) as PyTorch
// 2.11 eager runs it (GroupNormKernelImpl, HxW > 1, affine): three launches
// (bank/lib/norm.cuh):
//   mean, rstd [N * 32]  ka::row_moments: RowwiseMomentsCUDAKernel, a block of
//        512 threads a (sample, group) of CG * HW contiguous values, scalar
//        loads, Welford with a true division (ATen's WelfordOps);
//   a, b [N, C]          ComputeFusedParamsCUDAKernel: a = rstd * w[c],
//        b = b[c] - a * mean;
//   y = a * x + b        TensorIterator's elementwise_kernel<128, 4> with a, b
//        broadcast along each (n, c) row of HW (stride 0: no vector loads),
//        the row from a 32-bit fast division (ka::group_norm_affine; for
//        HW = 1, ATen's GroupNorm1dForward: one kernel for (x - mean) * rstd
//        * w + b, where a * x + b would cancel: groups of one value).
// Expected time (bench N = 32, CG = 16, HW = 4096: x is 268 MB): the moments
// read x (268 MB), the affine pass reads x and writes y (537 MB): 805 MB;
// PyTorch takes 338.2 us on the H200 (2.4 TB/s: scalar loads in both).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, CG, HW; inputs x [N, 32*CG, HW], w, b [32*CG]; output y.
	long long N = a->params[0], CG = a->params[1], HW = a->params[2], C = 32 * CG, NG = N * 32;
	long long stats = (2 * NG + 63) / 64 * 64; // floats, keeps a and b 256-byte aligned
	float *ws = (float *)ka_workspace((size_t)(stats + 2 * N * C) * sizeof(float));
	if (!ws)
		return -1;
	const float *x = (const float *)a->inputs[0].ptr;
	if (ka::row_moments(x, ws, ws + NG, NG, CG * HW, 1e-5f, false, stream))
		return -1;
	return ka::group_norm_affine(x, ws, ws + NG, (const float *)a->inputs[1].ptr,
				     (const float *)a->inputs[2].ptr, ws + stats, (float *)a->outputs[0].ptr, N,
				     C, CG, HW, stream);
}
