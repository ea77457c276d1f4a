// decode_gqa_bf16_d128, compiled baseline: torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
// (k and v expanded by one copy kernel each)
// torch.compile of the same math: the two cuBLAS GEMMs around one fused
// scale + softmax kernel (Inductor's persistent/looped softmax), scores in bf16.
// Scores stored in bf16: the margin to the tolerance is wide at every shape
// (tools/attn_precision.py; notes.md).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long B = a->params[0], HKV = a->params[1], G = a->params[2], L = a->params[3];
	attn::attn_shape s = {B, HKV * G, HKV, 1, L, 128, {false, 0}};
	return attn::attention<__nv_bfloat16, __nv_bfloat16>(s, (const __nv_bfloat16 *)a->inputs[0].ptr, (const __nv_bfloat16 *)a->inputs[1].ptr,
					(const __nv_bfloat16 *)a->inputs[2].ptr, (__nv_bfloat16 *)a->outputs[0].ptr, true, stream);
}
