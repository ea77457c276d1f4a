// add_rms_norm_bf16, eager baseline: (x + r, F.rms_norm(x + r, ...)) as PyTorch eager runs it:
// the add, then the composite
// rms_norm (upcast, pow, mean, add eps, rsqrt, mul, downcast, mul by weight),
// one kernel per op, fp32 intermediates [R, C] in memory.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x, r, w; outputs h, y.
	long long R = a->params[0], C = a->params[1], n = R * C;
	typedef __nv_bfloat16 bf;
	const bf *x = (const bf *)a->inputs[0].ptr, *w = (const bf *)a->inputs[2].ptr;
	bf *y = (bf *)a->outputs[1].ptr;
	attn::arena ws;
	if (!attn::arena_open(&ws, (size_t)n * 12 + (size_t)R * 8, false))
		return -1;
	float *xf = (float *)ws.take((size_t)n * 4), *sq = (float *)ws.take((size_t)n * 4);
	float *ms = (float *)ws.take((size_t)R * 4), *rs = (float *)ws.take((size_t)R * 4);
	bf *t = (bf *)ws.take((size_t)n * 2);
	if (!xf || !sq || !ms || !rs || !t)
		return -1;
	unsigned nb = attn::ew_blocks(n), rb = attn::ew_blocks(R);
	const int TH = attn::EW_THREADS;
	bf *h = (bf *)a->outputs[0].ptr;
	attn::ew_add<bf><<<nb, TH, 0, stream>>>(x, (const bf *)a->inputs[1].ptr, h, n); // x + r
	x = h;
	attn::ew_cast<bf, float><<<nb, TH, 0, stream>>>(x, xf, n);            // input.to(float32)
	attn::ew_square<float><<<nb, TH, 0, stream>>>(xf, sq, n);               // pow(2)
	attn::row_mean<float><<<(unsigned)R, attn::ROW_THREADS, 0, stream>>>(sq, ms, C); // mean(-1)
	attn::ew_add_scalar<<<rb, TH, 0, stream>>>(ms, ms, R, 1e-6f);          // add_(eps)
	attn::ew_rsqrt<<<rb, TH, 0, stream>>>(ms, rs, R);                      // rsqrt
	attn::ew_mul_rowscalar<float><<<nb, TH, 0, stream>>>(xf, rs, sq, n, C); // mul
	attn::ew_cast<float, bf><<<nb, TH, 0, stream>>>(sq, t, n);            // type_as(input)
	attn::ew_mul_rowvec<bf><<<nb, TH, 0, stream>>>(t, w, y, n, C);         // mul(weight)
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
