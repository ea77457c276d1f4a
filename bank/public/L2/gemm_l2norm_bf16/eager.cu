// gemm_l2norm_bf16, eager baseline: torch.nn.functional.normalize(x @ w.T, dim=-1) as PyTorch eager runs it: one library call or kernel per op,
// intermediates as full tensors in scratch memory.
//   t = x @ w.T    cuBLAS (fp32 accumulation)
//   n = t.norm(dim=-1, keepdim=True)   one reduction kernel
//   d = n.clamp_min(1e-12)
//   y = t / d  (expand_as, then the division kernel)
// Trusted code: it runs natively in the runner (bank/lib/gemm.cuh has the
// math modes and the kernels).
#include "gemm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w; output y.
	long long M = a->params[0];
	long long N = a->params[1];
	long long K = a->params[2];
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)a->inputs[0].ptr;
	const __nv_bfloat16 *w = (const __nv_bfloat16 *)a->inputs[1].ptr;
	__nv_bfloat16 *y = (__nv_bfloat16 *)a->outputs[0].ptr;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, kagemm::round256(M * N * sizeof(__nv_bfloat16)) + 2 * kagemm::round256(M * sizeof(__nv_bfloat16))))
		return -1;
	__nv_bfloat16 *t = kagemm::alloc<__nv_bfloat16>(&c, M * N), *n = kagemm::alloc<__nv_bfloat16>(&c, M), *d = kagemm::alloc<__nv_bfloat16>(&c, M);
	if (kagemm::gemm<__nv_bfloat16>(&c, true, M, N, K, x, w, t) || kagemm::row_norm<__nv_bfloat16>(&c, t, n, M, N) ||
	    kagemm::unary<__nv_bfloat16>(&c, n, d, M, kagemm::op_clamp{1e-12f, INFINITY}))
		return -1;
	return kagemm::div_rowscalar<__nv_bfloat16>(&c, t, d, y, M * N, N);
}
