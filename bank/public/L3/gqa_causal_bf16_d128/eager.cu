// gqa_causal_bf16_d128, eager baseline: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
// (the math path expands k and v first: repeat_interleave(G, dim=1), one copy kernel each)
// softmax((q @ k^T) * scale + mask) @ v, PyTorch eager's math path op by op:
//   scores = q @ k^T   cuBLAS strided batched GEMM, bf16 in, fp32 compute, fp32 scores
//   scores * scale   elementwise kernel (fp32 result)
//   masked_fill      -inf above the diagonal
//   softmax(-1)      row softmax, fp32 math, bf16 result
//   p @ v            cuBLAS strided batched GEMM
// Scores kept in fp32 as PyTorch's fused SDPA kernels keep them: stored in bf16
// they put the baseline within 2x of (or over) the tolerance at the bench shape (notes.md).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long B = a->params[0], HKV = a->params[1], G = a->params[2], S = a->params[3];
	attn::attn_shape s = {B, HKV * G, HKV, S, S, 128, {true, 0}};
	return attn::attention<__nv_bfloat16, float>(s, (const __nv_bfloat16 *)a->inputs[0].ptr, (const __nv_bfloat16 *)a->inputs[1].ptr,
					(const __nv_bfloat16 *)a->inputs[2].ptr, (__nv_bfloat16 *)a->outputs[0].ptr, false, stream);
}
