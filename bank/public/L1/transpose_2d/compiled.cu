// transpose_2d, compiled baseline: x.t().contiguous() as torch.compile
// produces it: a pointwise copy whose load and store orders differ, which
// Triton turns into a tiled layout conversion through shared memory
// (bank/lib/compiled.cuh tiled_transpose, 64 x 64 tiles, 16-byte vectors on
// both sides; notes.md has the history).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N; input x [M, N] fp32; output y [N, M] fp32.
	long long M = a->params[0], N = a->params[1];
	return ka::tiled_transpose((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, 1, M, N, stream);
}
