// cross_entropy, compiled baseline: F.cross_entropy under torch.compile: one fused
// kernel per row, online logsumexp and the target gather; no [R, V] intermediate.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, V; inputs x, t; output loss.
	long long R = a->params[0], V = a->params[1];
	attn::cross_entropy_online<<<(unsigned)R, attn::ROW_THREADS, 0, stream>>>(
		(const float *)a->inputs[0].ptr, (const int64_t *)a->inputs[1].ptr, (float *)a->outputs[0].ptr, V);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
