// add_rms_norm_bf16, compiled baseline: (x + r, F.rms_norm(x + r, (C,), w,
// eps=1e-6)) under torch.compile: ONE fused kernel (bank/lib/norm.cuh
// ka::add_rms_looped, Inductor's looped reduction with its epilogue): a block
// of 256 threads a row; the first loop reads x and r (16-byte vectors), writes
// h = x + r rounded to bf16 and sums h^2 in fp32; the second loop reads x and
// r again (from L2), recomputes h and writes y = h * rsqrt(sum / C + 1e-6) * w
// in fp32, rounded once.
// Expected time (bench R = 16384, C = 4096): x and r read, h and y written
// once from DRAM: 4 x 134 MB = 537 MB; torch.compile takes 127.6 us on the
// H200 (4.2 TB/s).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x, r [R, C], w [C]; outputs h, y [R, C].
	typedef __nv_bfloat16 bf;
	return ka::add_rms_looped((const bf *)a->inputs[0].ptr, (const bf *)a->inputs[1].ptr,
				  (const bf *)a->inputs[2].ptr, (bf *)a->outputs[0].ptr, (bf *)a->outputs[1].ptr,
				  a->params[0], a->params[1], 1e-6f, stream);
}
