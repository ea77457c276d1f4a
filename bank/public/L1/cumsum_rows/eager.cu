// cumsum_rows, eager baseline: torch.cumsum(x, dim=-1) as PyTorch eager runs
// it: one launch of ATen's scan along the innermost dimension (bank/lib/
// eager.cuh scan_rows: 16 rows per block, 32 threads per row scanning chunks
// of 64 elements in shared memory, a carry between chunks).
// Calibration (H200, docs/PERF.md): PyTorch's own scan is slower (213 us
// against 120 us: block-wide barriers per step), so "vs eager" is understated.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] fp32.
	long long R = a->params[0], C = a->params[1];
	return ka::scan_rows((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, R, C, stream);
}
