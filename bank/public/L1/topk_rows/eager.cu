// topk_rows, eager baseline: torch.topk(x, K, dim=-1) as PyTorch eager runs
// it for short rows: ATen's single-block top-k (one block per row, a radix
// select of the K-th largest value, 2 bits a pass, then the selected
// elements written in index order) and a second launch sorting each row's K
// results (bank/lib/eager.cuh topk_rows).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C, K; input x [R, C] fp32; outputs values [R, K] fp32, indices [R, K] int64.
	long long R = a->params[0], C = a->params[1];
	int K = (int)a->params[2];
	return ka::topk_rows((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr,
			     (long long *)a->outputs[1].ptr, R, C, K, stream);
}
