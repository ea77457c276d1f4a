// rms_norm_bf16, compiled baseline: the same under torch.compile: one fused kernel per row
// (sum of squares in fp32, then the normalised write).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x, w; outputs y.
	long long R = a->params[0], C = a->params[1];
	typedef __nv_bfloat16 bf;
	attn::rms_norm_fused<bf><<<(unsigned)R, attn::ROW_THREADS, 0, stream>>>(
		(const bf *)a->inputs[0].ptr, NULL, (const bf *)a->inputs[1].ptr, NULL,
		(bf *)a->outputs[0].ptr, C, 1e-6f);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
