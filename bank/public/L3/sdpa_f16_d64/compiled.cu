// sdpa_f16_d64, compiled baseline: the attention written out op by op (task.json
// baseline_torch; its statement, torch, is F.scaled_dot_product_attention),
// as torch.compile runs it (bank/lib/attn.cuh, "Compiled"):
//   bmm(q, k^T, out_dtype=float32)  cuBLAS (an extern kernel)
//   * scale, softmax, .to(fp16)
//                                   ONE fused kernel (fp32 scores in, 16-bit
//                                   probabilities out; Inductor's configuration)
//   bmm(p, v)                       cuBLAS
// Trusted code: it runs natively in the runner, not through the recorder.
#include "attn.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long B = a->params[0], H = a->params[1], S = a->params[2];
	attn::attn_shape s = {B, H, H, S, S, 64, {false, 0}};
	return attn::attention<__half>(s, (const __half *)a->inputs[0].ptr, (const __half *)a->inputs[1].ptr,
					(const __half *)a->inputs[2].ptr, (__half *)a->outputs[0].ptr, true, stream);
}
