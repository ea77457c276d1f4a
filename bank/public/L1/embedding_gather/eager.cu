// embedding_gather, eager baseline: F.embedding(idx, weight) as PyTorch
// eager runs it: weight.index_select(0, idx), ATen's index_select kernel for
// large indices (one thread per output element, the index read per element,
// grid-stride; bank/lib/eager.cuh index_select_rows).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, V, D; inputs idx [N] int64, weight [V, D] fp32; output y [N, D] fp32.
	long long N = a->params[0], D = a->params[2];
	return ka::index_select_rows((const float *)a->inputs[1].ptr, (const long long *)a->inputs[0].ptr,
				     (float *)a->outputs[0].ptr, N, D, stream);
}
