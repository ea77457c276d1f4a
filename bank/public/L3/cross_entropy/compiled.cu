// cross_entropy, compiled baseline: F.cross_entropy(x, t, reduction='none')
// under torch.compile: ONE fused kernel (bank/lib/norm.cuh ka::online_rows,
// Inductor's online-softmax reduction with the gather in its epilogue): a
// block of 256 threads a row (num_warps = 8), RBLOCK = 2048 (two float4
// loads a thread an iteration, issued before their uses), a
// running (max, sum of exp(x - max)) per element slot (two exp an element), a
// block combine, then loss = max + log(sum) - x[r, t[r]] written by one
// thread; no [R, V] intermediate.
// Expected time (bench R = 8192, V = 32000): one read of x, 1049 MB;
// torch.compile takes 360.3 us on the H200 (2.9 TB/s).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, V; inputs x [R, V], t [R] (int64); output loss [R].
	return ka::online_rows<ka::ONLINE_XENT>((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr,
						(const int64_t *)a->inputs[1].ptr, a->params[0], a->params[1],
						stream);
}
