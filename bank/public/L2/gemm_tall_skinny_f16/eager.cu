// gemm_tall_skinny_f16, eager baseline: torch.relu(x @ w.T + b) as PyTorch eager runs it: one library call or kernel per op,
// intermediates as full tensors in scratch memory.
//   t0 = x @ w.T   cuBLAS (cublasGemmEx, fp32 accumulation)
//   t1 = t0 + b
//   y = t1 then relu
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
	if (kagemm::begin(&c, stream, 2 * kagemm::round256(n * sizeof(__half))))
		return -1;
	__half *t0 = kagemm::alloc<__half>(&c, n);
	__half *t1 = kagemm::alloc<__half>(&c, n);
	if (kagemm::gemm<__half>(&c, true, M, N, K, x, w, t0) ||
	    kagemm::add_rowvec<__half>(&c, t0, b, t1, n, N))
		return -1;
	return kagemm::unary<__half>(&c, t1, y, n, kagemm::op_relu());
}
