// gemm_bias_relu_bf16, compiled baseline: torch.relu(x @ w.T + b) as torch.compile produces it by default: the GEMM through cuBLAS
// (extern kernel), then one fused kernel for everything after it.
//   t = x @ w.T   cuBLAS (cublasGemmEx, fp32 accumulation)
//   y = t + b then relu   one fused pointwise kernel
// Trusted code: it runs natively in the runner (bank/lib/gemm.cuh has the
// math modes and the kernels).
#include "gemm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w, b; output y.
	long long M = a->params[0];
	long long N = a->params[1];
	long long K = a->params[2];
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)a->inputs[0].ptr;
	const __nv_bfloat16 *w = (const __nv_bfloat16 *)a->inputs[1].ptr;
	const __nv_bfloat16 *b = (const __nv_bfloat16 *)a->inputs[2].ptr;
	__nv_bfloat16 *y = (__nv_bfloat16 *)a->outputs[0].ptr;
	long long n = M * N;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, kagemm::round256(n * sizeof(__nv_bfloat16))))
		return -1;
	__nv_bfloat16 *t = kagemm::alloc<__nv_bfloat16>(&c, n);
	if (kagemm::gemm<__nv_bfloat16>(&c, true, M, N, K, x, w, t))
		return -1;
	return kagemm::fused_vec<__nv_bfloat16>(&c, t, b, (const __nv_bfloat16 *)0, (const __nv_bfloat16 *)0, y, n, N, kagemm::op_relu());
}
