// log_softmax, eager baseline: torch.log_softmax(x, dim=-1) as PyTorch 2.11
// eager runs it for rows too long for shared memory (C * 4 bytes >= 48 KiB):
// ONE kernel, ATen's cunn_SoftMaxForward with the LogSoftMax epilogue
// (bank/lib/norm.cuh ka::softmax_fwd): a block of min(C, 1024) threads a row,
// float4 loads, three passes over the row (max; sum of exp(x - max); the
// write of x - max - log(sum)), the second and third mostly from L2.
// Expected time (bench R = 4096, C = 32000): x read and y written once from
// DRAM, 2 x 524 MB = 1049 MB; PyTorch takes 419.4 us on the H200 (2.5 TB/s,
// the three passes and two block reductions a row costing the rest).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C]; output y [R, C].
	return ka::softmax_fwd<true>((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, a->params[0],
				     a->params[1], stream);
}
