// gqa_causal_bf16_d128, eager baseline: the attention written out op by op (task.json
// baseline_torch; its statement, torch, is F.scaled_dot_product_attention),
// as PyTorch eager runs it, one launch per op (bank/lib/attn.cuh, "Eager"):
//   repeat_interleave of k and v   ATen's copy of a broadcast view, each
//   bmm(q, k^T, out_dtype=float32)  cuBLAS strided batched GEMM, fp32 scores
//   * scale                         vectorized elementwise (fp32)
//   masked_fill(mask, -inf)         the mask tensor, the clone, masked_fill_
//   softmax(-1)                     ATen's softmax, fp32 in and out
//   .to(bf16)                       vectorized cast
//   bmm(p, v)                       cuBLAS
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long B = a->params[0], HKV = a->params[1], G = a->params[2], S = a->params[3];
	attn::attn_shape s = {B, HKV * G, HKV, S, S, 128, {true, 0}};
	return attn::attention<__nv_bfloat16>(s, (const __nv_bfloat16 *)a->inputs[0].ptr, (const __nv_bfloat16 *)a->inputs[1].ptr,
					(const __nv_bfloat16 *)a->inputs[2].ptr, (__nv_bfloat16 *)a->outputs[0].ptr, false, stream);
}
