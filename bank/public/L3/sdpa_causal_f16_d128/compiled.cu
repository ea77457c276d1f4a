// sdpa_causal_f16_d128, compiled baseline: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
// torch.compile of the same math: the two cuBLAS GEMMs around one fused
// scale + mask + softmax kernel (Inductor's persistent/looped softmax), fp32 scores, fp16 probabilities.
// Scores kept in fp32 as PyTorch's fused SDPA kernels keep them: stored in fp16
// they put the baseline within 2x of (or over) the tolerance at the bench shape (notes.md).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long B = a->params[0], H = a->params[1], S = a->params[2];
	attn::attn_shape s = {B, H, H, S, S, 128, {true, 0}};
	return attn::attention<__half, float>(s, (const __half *)a->inputs[0].ptr, (const __half *)a->inputs[1].ptr,
					(const __half *)a->inputs[2].ptr, (__half *)a->outputs[0].ptr, true, stream);
}
