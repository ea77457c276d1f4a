// softmax_rows, eager baseline: torch.softmax(x, dim=-1) as PyTorch eager runs
// it: a single fused kernel (ATen's cunn_SoftMaxForwardSmem), one block per
// row, the row cached in shared memory when it fits (bank/lib/eager.cuh).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C]; output y [R, C].
	return ka::softmax_rows((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, a->params[0],
				a->params[1], stream);
}
