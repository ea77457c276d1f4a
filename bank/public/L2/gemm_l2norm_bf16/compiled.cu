// gemm_l2norm_bf16, compiled baseline: torch.nn.functional.normalize(x @ w.T, dim=-1) as torch.compile produces it by default: the GEMM through cuBLAS
// (extern kernel), then one fused kernel for everything after it.
//   t = x @ w.T    cuBLAS (fp32 accumulation)
//   y = t / max(||t||, 1e-12) one fused row kernel (reduction + pointwise)
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
	if (kagemm::begin(&c, stream, kagemm::round256(M * N * sizeof(__nv_bfloat16))))
		return -1;
	__nv_bfloat16 *t = kagemm::alloc<__nv_bfloat16>(&c, M * N);
	if (kagemm::gemm<__nv_bfloat16>(&c, true, M, N, K, x, w, t))
		return -1;
	return kagemm::row_l2normalize<__nv_bfloat16>(&c, t, y, M, N, 1e-12f);
}
