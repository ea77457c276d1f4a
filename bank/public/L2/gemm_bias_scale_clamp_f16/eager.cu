// gemm_bias_scale_clamp_f16, eager baseline: torch.clamp((x @ w.T + b) * 0.5, -1.0, 1.0) as PyTorch eager runs it: one library call or kernel per op,
// intermediates as full tensors in scratch memory.
//   t0 = x @ w.T   cuBLAS (cublasGemmEx, fp32 accumulation)
//   t1 = t0 + b
//   t2 = t1 * 0.5
//   y = t2 clamped to [-1, 1]
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
	if (kagemm::begin(&c, stream, 3 * kagemm::round256(n * sizeof(__half))))
		return -1;
	__half *t0 = kagemm::alloc<__half>(&c, n);
	__half *t1 = kagemm::alloc<__half>(&c, n);
	__half *t2 = kagemm::alloc<__half>(&c, n);
	if (kagemm::gemm<__half>(&c, true, M, N, K, x, w, t0) ||
	    kagemm::add_rowvec<__half>(&c, t0, b, t1, n, N) ||
	    kagemm::unary<__half>(&c, t1, t2, n, kagemm::op_scale{0.5f}))
		return -1;
	return kagemm::unary<__half>(&c, t2, y, n, kagemm::op_clamp{-1.0f, 1.0f});
}
