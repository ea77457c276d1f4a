// cumsum_rows, eager baseline: torch.cumsum(x, dim=-1) as PyTorch eager runs
// it: one launch of ATen's scan along the innermost dimension (bank/lib/
// eager.cuh scan_rows: 512-thread blocks, 32 lanes a row by 16 rows at the
// bench shape, chunks of 64 elements in shared memory, a Sklansky scan with a
// block-wide barrier a level, a running total between chunks; notes.md).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] fp32.
	long long R = a->params[0], C = a->params[1];
	return ka::scan_rows((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, R, C, stream);
}
