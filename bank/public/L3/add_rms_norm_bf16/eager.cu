// add_rms_norm_bf16, eager baseline: (x + r, F.rms_norm(x + r, (C,), w,
// eps=1e-6)) as PyTorch 2.11 eager runs it: the expression computes x + r
// twice, so three launches (bank/lib/eager.cuh, bank/lib/norm.cuh):
//   h = x + r        ka::binary: TensorIterator's vectorized add (bf16, fp32
//                    math, rounded): the first output;
//   t = x + r        the same kernel again, into scratch (the argument of
//                    rms_norm is a second, separate tensor);
//   y = rms_norm(t)  ka::ln_eager: ATen's one fused RMS-norm kernel (block of
//                    128 threads a row, fp32 sum of squares, w * (rstd * t)).
// Expected time (bench R = 16384, C = 4096, 134 MB a tensor): each add moves
// 402 MB, the norm 268 MB: 1072 MB. PyTorch takes 271.0 us on the H200
// (3.96 TB/s over the three; the rms_norm alone takes 82.6 us in the
// rms_norm_bf16 task, leaving 94 us an add: 4.3 TB/s, a streaming kernel's
// rate, where one add would have to run at 2.1 TB/s).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

struct add_f {
	__device__ float operator()(float a, float b) const { return a + b; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x, r [R, C], w [C]; outputs h, y [R, C].
	typedef __nv_bfloat16 bf;
	long long R = a->params[0], C = a->params[1], n = R * C;
	const bf *x = (const bf *)a->inputs[0].ptr, *r = (const bf *)a->inputs[1].ptr;
	const bf *w = (const bf *)a->inputs[2].ptr;
	bf *h = (bf *)a->outputs[0].ptr, *y = (bf *)a->outputs[1].ptr;
	bf *t = (bf *)ka_workspace((size_t)n * sizeof(bf));
	if (!t)
		return -1;
	if (ka::binary(x, r, h, n, add_f(), stream) || ka::binary(x, r, t, n, add_f(), stream))
		return -1;
	return ka::ln_eager<bf, true>(t, w, NULL, y, R, C, 1e-6f, stream);
}
