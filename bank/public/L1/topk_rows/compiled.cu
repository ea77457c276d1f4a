// topk_rows, compiled baseline: torch.topk(x, K, dim=-1) under torch.compile.
// Inductor has no lowering for topk: it calls the ATen kernel (a fallback
// kernel in the generated code), so the compiled program launches exactly
// what eager does (bank/lib/eager.cuh topk_rows).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C, K; input x [R, C] fp32; outputs values [R, K] fp32, indices [R, K] int64.
	long long R = a->params[0], C = a->params[1];
	int K = (int)a->params[2];
	return ka::topk_rows((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr,
			     (long long *)a->outputs[1].ptr, R, C, K, stream);
}
