// rope_attn_causal_f16_d128, compiled baseline: torch.nn.functional.scaled_dot_product_attention(q * cs + torch.cat((-q[..., 64:], q[..., :64]), dim=-1) * sn, k * cs + torch.cat((-k[..., 64:], k[..., :64]), dim=-1) * sn, v, is_causal=True)
// one fused rotary kernel each for q and k, then
// torch.compile of the same math: the two cuBLAS GEMMs around one fused
// scale + mask + softmax kernel (Inductor's persistent/looped softmax), fp32 scores, fp16 probabilities.
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
	if (!attn::arena_open(&ws, attn::attention_ws_bytes(s, 2, 4) + (size_t)n * 2 * 2 + 4096, true))
		return -1;
	cublasHandle_t h = attn::blas_handle(stream, &ws);
	if (!h)
		return -1;
	const __half *in[2] = {q, k};
	__half *rot[2];
	unsigned blocks = attn::ew_blocks(n);
	for (int t = 0; t < 2; t++) {
		rot[t] = (__half *)ws.take((size_t)n * 2);
		if (!rot[t])
			return -1;
		attn::rope_fused<__half><<<blocks, attn::EW_THREADS, 0, stream>>>(in[t], cs, sn, rot[t], n, S, D);
	}
	return attn::attention_core<__half, float>(h, &ws, s, rot[0], rot[1], v, (__half *)a->outputs[0].ptr, true, stream);
}
