// layer_norm, compiled baseline: F.layer_norm under torch.compile: one fused kernel
// per row, Welford reduction plus the affine epilogue (Inductor persistent reduction, 1024 threads).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], w [C], b [C]; output y [R, C].
	long long R = a->params[0], C = a->params[1];
	attn::layer_norm_rows<float><<<(unsigned)R, 1024, 0, stream>>>(
		(const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr,
		(const float *)a->inputs[2].ptr, (float *)a->outputs[0].ptr, C, 1e-5f);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
