// rope_attn_causal_f16_d128, eager baseline: the attention written out op by
// op (task.json baseline_torch; its statement, torch, is
// F.scaled_dot_product_attention of the rotated q and k), as PyTorch eager
// runs it, one launch per op (bank/lib/attn.cuh, "Eager"):
//   q * cs, -q[..., 64:], cat, * sn, +   rotary: five launches, for q then k
//   bmm(q', k'^T, out_dtype=float32)    cuBLAS strided batched GEMM, fp32 scores
//   * scale                             vectorized elementwise (fp32)
//   masked_fill(mask, -inf)             the mask tensor, the clone, masked_fill_
//   softmax(-1)                         ATen's softmax, fp32 in and out
//   .to(fp16)                           vectorized cast
//   bmm(p, v)                           cuBLAS
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params B, H, S; inputs q, k, v, cs, sn [S, 128]; output o.
	long long B = a->params[0], H = a->params[1], S = a->params[2], D = 128, n = B * H * S * D;
	const __half *q = (const __half *)a->inputs[0].ptr, *k = (const __half *)a->inputs[1].ptr;
	const __half *v = (const __half *)a->inputs[2].ptr, *cs = (const __half *)a->inputs[3].ptr;
	const __half *sn = (const __half *)a->inputs[4].ptr;
	attn::attn_shape s = {B, H, H, S, S, D, {true, 0}};
	attn::arena ws;
	if (!attn::arena_open(&ws, attn::attention_ws_bytes(s, 2) + (size_t)n * 2 * 7 + 4096, true))
		return -1;
	cublasHandle_t h = attn::blas_handle(stream, &ws);
	if (!h)
		return -1;
	const __half *in[2] = {q, k};
	__half *rot[2];
	for (int t = 0; t < 2; t++) {
		rot[t] = (__half *)ws.take((size_t)n * 2);
		__half *tmp[3] = {(__half *)ws.take((size_t)n * 2), (__half *)ws.take((size_t)n), (__half *)ws.take((size_t)n * 2)};
		if (!rot[t] || !tmp[0] || !tmp[1] || !tmp[2] || attn::rope_eager(in[t], cs, sn, rot[t], tmp, n, S, D, stream))
			return -1;
	}
	return attn::attention_core<__half>(h, &ws, s, rot[0], rot[1], v, (__half *)a->outputs[0].ptr, false, stream);
}
