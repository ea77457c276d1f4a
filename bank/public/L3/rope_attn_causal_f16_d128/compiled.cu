// rope_attn_causal_f16_d128, compiled baseline: the attention written out op
// by op (task.json baseline_torch; its statement, torch, is
// F.scaled_dot_product_attention of the rotated q and k), as torch.compile
// runs it (bank/lib/attn.cuh, "Compiled"):
//   rotary of q and of k                one fused pointwise kernel each
//   bmm(q', k'^T, out_dtype=float32)    cuBLAS (an extern kernel)
//   * scale, masked_fill, softmax, .to(fp16)
//                                       ONE fused kernel (fp32 scores in, 16-bit
//                                       probabilities out; Inductor's configuration)
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
	if (!attn::arena_open(&ws, attn::attention_ws_bytes(s, 2) + (size_t)n * 2 * 2 + 4096, true))
		return -1;
	cublasHandle_t h = attn::blas_handle(stream, &ws);
	if (!h)
		return -1;
	const __half *in[2] = {q, k};
	__half *rot[2];
	for (int t = 0; t < 2; t++) {
		rot[t] = (__half *)ws.take((size_t)n * 2);
		if (!rot[t] || attn::rope_fused(in[t], cs, sn, rot[t], n, S, D, stream))
			return -1;
	}
	return attn::attention_core<__half>(h, &ws, s, rot[0], rot[1], v, (__half *)a->outputs[0].ptr, true, stream);
}
