// rope_attn_causal_f16_d128, eager baseline: torch.nn.functional.scaled_dot_product_attention(q * cs + torch.cat((-q[..., 64:], q[..., :64]), dim=-1) * sn, k * cs + torch.cat((-k[..., 64:], k[..., :64]), dim=-1) * sn, v, is_causal=True)
// rotary (each op one kernel, fp16 results, for q and for k: q * cs, neg of
// the second half, cat, * sn, add), then
// softmax((q @ k^T) * scale + mask) @ v, PyTorch eager's math path op by op:
//   scores = q @ k^T   cuBLAS strided batched GEMM, fp16 in, fp32 compute, fp32 scores
//   scores * scale   elementwise kernel (fp32 result)
//   masked_fill      -inf above the diagonal
//   softmax(-1)      row softmax, fp32 math, fp16 result
//   p @ v            cuBLAS strided batched GEMM
// Scores kept in fp32 as PyTorch's fused SDPA kernels keep them: stored in fp16
// they put the baseline within 2x of (or over) the tolerance at the bench shape (notes.md).
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
	if (!attn::arena_open(&ws, attn::attention_ws_bytes(s, 2, 4) + (size_t)n * 2 * 8 + 4096, true))
		return -1;
	cublasHandle_t h = attn::blas_handle(stream, &ws);
	if (!h)
		return -1;
	const __half *in[2] = {q, k};
	__half *rot[2];
	unsigned blocks = attn::ew_blocks(n), hb = attn::ew_blocks(n / 2);
	for (int t = 0; t < 2; t++) {
		rot[t] = (__half *)ws.take((size_t)n * 2);
		if (!rot[t])
			return -1;
		__half *t1 = (__half *)ws.take((size_t)n * 2), *nh = (__half *)ws.take((size_t)n);
		__half *t3 = (__half *)ws.take((size_t)n * 2);
		if (!t1 || !nh || !t3)
			return -1;
		attn::ew_mul_table<__half><<<blocks, attn::EW_THREADS, 0, stream>>>(in[t], cs, t1, n, S * D);
		attn::ew_neg_half<__half><<<hb, attn::EW_THREADS, 0, stream>>>(in[t], nh, n / 2, D);
		attn::ew_cat_half<__half><<<blocks, attn::EW_THREADS, 0, stream>>>(nh, in[t], t3, n, D);
		attn::ew_mul_table<__half><<<blocks, attn::EW_THREADS, 0, stream>>>(t3, sn, t3, n, S * D);
		attn::ew_add<__half><<<blocks, attn::EW_THREADS, 0, stream>>>(t1, t3, rot[t], n);
	}
	return attn::attention_core<__half, float>(h, &ws, s, rot[0], rot[1], v, (__half *)a->outputs[0].ptr, false, stream);
}
