// cumsum_rows, compiled baseline: torch.cumsum(x, dim=-1) as torch.compile
// produces it: Inductor's scan kernel, one block per row looping over the row
// in chunks with a carry (bank/lib/compiled.cuh block_scan_rows).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] fp32.
	long long R = a->params[0], C = a->params[1];
	return ka::block_scan_rows((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, R, C, stream);
}
