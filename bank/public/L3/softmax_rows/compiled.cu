// softmax_rows, compiled baseline: torch.softmax(x, dim=-1) under
// torch.compile: ONE fused kernel (bank/lib/norm.cuh ka::online_rows,
// Inductor's online softmax in a looped reduction): a block of 128 threads a
// row, one float4 load a thread an iteration, a running (max, sum of
// exp(x - max)) per element slot (two exp an element), a block combine, then
// a second loop reading x (from L2) and writing exp(x - max) / sum.
// Expected time (bench R = 4096, C = 4096): x read and y written once,
// 2 x 67 MB = 134 MB; torch.compile takes 44.9 us on the H200 (3.0 TB/s).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C]; output y [R, C].
	// 128 threads a row, where Inductor's kernel runs 512 (notes.md: at 512
	// this kernel takes 1.40 of torch.compile's time, at 128 1.03).
	return ka::online_rows<ka::ONLINE_SOFTMAX>((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr,
						   NULL, a->params[0], a->params[1], stream, 128);
}
