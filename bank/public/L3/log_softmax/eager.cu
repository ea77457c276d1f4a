// log_softmax, eager baseline: torch.log_softmax as PyTorch eager runs it: one
// kernel (cunn_SoftMaxForward with the LogSoftMax epilogue), block per row, max
// pass, sum-of-exp pass, write pass.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C]; output y [R, C].
	long long R = a->params[0], C = a->params[1];
	attn::log_softmax_rows<<<(unsigned)R, 1024, 0, stream>>>((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, C);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
