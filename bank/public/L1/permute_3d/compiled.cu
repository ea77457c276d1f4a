// permute_3d, compiled baseline: x.permute(2, 0, 1).contiguous() as
// torch.compile produces it: a pointwise copy over y's index space whose
// load order (x viewed as [A*B, C]) is the transpose of its store order, so
// Triton converts the layout through a shared-memory tile (bank/lib/
// compiled.cuh tiled_transpose of [A*B, C] into [C, A*B], 2-byte words, 64 x
// 64 tiles moved as 16-byte vectors; notes.md has the history).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params A, B, C; input x [A, B, C] fp16; output y [C, A, B] fp16.
	long long A = a->params[0], B = a->params[1], C = a->params[2];
	return ka::tiled_transpose((const unsigned short *)a->inputs[0].ptr, (unsigned short *)a->outputs[0].ptr, 1,
				   A * B, C, stream);
}
