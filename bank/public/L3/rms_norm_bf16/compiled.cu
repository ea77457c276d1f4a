// rms_norm_bf16, compiled baseline: F.rms_norm(x, (C,), w, eps=1e-6) under
// torch.compile: ONE kernel, a persistent reduction (bank/lib/norm.cuh
// ka::rms_persistent): a block of 512 threads (num_warps = 16) a row, the row
// held in registers (one 16-byte vector of 8 bf16 a thread at C = 4096), the
// fp32 sum of squares, a block combine, then y = x * rsqrt(sum / C + 1e-6) * w
// in fp32, rounded once, from the registers: x read once.
// Inductor's generated kernel was not inspected. Its time, 97.3 us, is slower
// than eager's fused kernel (82.6 us): 268 MB at 2.76 TB/s if it is one pass,
// the rate to expect of one 16-byte load a thread in flight with nothing to
// overlap it; a looped two-read kernel like the add_rms_norm_bf16 baseline's
// would run at Inductor's 4.2 TB/s (about 65 us, a ratio under 0.8).
// Expected time (bench R = 16384, C = 4096): 2 x 134 MB = 268 MB; torch.compile
// takes 97.3 us on the H200.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], w [C]; output y [R, C].
	typedef __nv_bfloat16 bf;
	return ka::rms_persistent((const bf *)a->inputs[0].ptr, (const bf *)a->inputs[1].ptr,
				  (bf *)a->outputs[0].ptr, a->params[0], a->params[1], 1e-6f, stream);
}
