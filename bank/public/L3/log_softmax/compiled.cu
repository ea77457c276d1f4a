// log_softmax, compiled baseline: torch.log_softmax under torch.compile: one fused
// kernel per row, online (max, sum) pass then the write pass (Inductor looped reduction).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C]; output y [R, C].
	long long R = a->params[0], C = a->params[1];
	attn::log_softmax_online<<<(unsigned)R, attn::ROW_THREADS, 0, stream>>>((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, C);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
