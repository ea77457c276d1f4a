// gemm_rowmax_f16, compiled baseline: torch.amax(x @ w.T + b, dim=-1) as torch.compile produces it by default: the GEMM through cuBLAS
// (extern kernel), then one fused kernel for everything after it.
//   t = x @ w.T    cuBLAS (fp32 accumulation)
//   y = amax(t + b) one fused reduction kernel
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
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, kagemm::round256(M * N * sizeof(__half))))
		return -1;
	__half *t = kagemm::alloc<__half>(&c, M * N);
	if (kagemm::gemm<__half>(&c, true, M, N, K, x, w, t))
		return -1;
	return kagemm::row_max<__half>(&c, t, b, y, M, N);
}
