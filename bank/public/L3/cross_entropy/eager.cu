// cross_entropy, eager baseline: F.cross_entropy as PyTorch eager runs it: log_softmax
// (one kernel, a full [R, V] fp32 tensor in memory), then nll_loss_forward
// (reduction none: one thread per row gathers -logp[r, t[r]]).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, V; inputs x [R, V], t [R]; output loss [R].
	long long R = a->params[0], V = a->params[1];
	attn::arena ws;
	if (!attn::arena_open(&ws, (size_t)(R * V) * 4, false))
		return -1;
	float *lp = (float *)ws.take((size_t)(R * V) * 4);
	if (!lp)
		return -1;
	attn::log_softmax_rows<<<(unsigned)R, 1024, 0, stream>>>((const float *)a->inputs[0].ptr, lp, V);
	attn::nll_loss_rows<<<attn::ew_blocks(R), attn::EW_THREADS, 0, stream>>>(
		lp, (const int64_t *)a->inputs[1].ptr, (float *)a->outputs[0].ptr, R, V);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
