// gemm_bias_silu_f16, compiled baseline: torch.nn.functional.silu(x @ w.T + b) as torch.compile produces it by default: the GEMM through cuBLAS
// (extern kernel), then one fused kernel for everything after it.
//   t = x @ w.T   cuBLAS (cublasGemmEx, fp32 accumulation)
//   y = t + b then silu   one fused pointwise kernel
// Trusted code: it runs natively in the runner (bank/lib/gemm.cuh has the
// math modes and the kernels).
#include "gemm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w, b; output y.
	long long M = a->params[0];
	long long N = a->params[1];
	long long K = a->params[2];
	const __half *x = (const __half *)a->inputs[0].ptr;
	const __half *w = (const __half *)a->inputs[1].ptr;
	const __half *b = (const __half *)a->inputs[2].ptr;
	__half *y = (__half *)a->outputs[0].ptr;
	long long n = M * N;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, kagemm::round256(n * sizeof(__half))))
		return -1;
	__half *t = kagemm::alloc<__half>(&c, n);
	if (kagemm::gemm<__half>(&c, true, M, N, K, x, w, t))
		return -1;
	return kagemm::fused_vec<__half>(&c, t, b, (const __half *)0, (const __half *)0, y, n, N, kagemm::op_silu());
}
