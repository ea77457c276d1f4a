// log_softmax, compiled baseline: torch.log_softmax(x, dim=-1) under
// torch.compile: ONE fused kernel (bank/lib/norm.cuh ka::online_rows,
// Inductor's online softmax in a looped reduction): a block a row (1024
// threads for rows this long, so that the rows in flight stay in L2), one
// float4 load a thread an iteration, a running (max, sum of exp(x - max)) per
// element slot (two exp an element), a block combine, then a second loop
// reading x (from L2) and writing x - max - log(sum).
// Expected time (bench R = 4096, C = 32000): 2 x 524 MB = 1049 MB from DRAM;
// torch.compile takes 366.5 us on the H200 (2.86 TB/s).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C]; output y [R, C].
	return ka::online_rows<ka::ONLINE_LOG_SOFTMAX>((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr,
						       NULL, a->params[0], a->params[1], stream);
}
