// gemm_rowmax_f16, eager baseline: torch.amax(x @ w.T + b, dim=-1) as PyTorch eager runs it: one library call or kernel per op,
// intermediates as full tensors in scratch memory.
//   t1 = x @ w.T   cuBLAS (fp32 accumulation)
//   t2 = t1 + b
//   y = amax(t2, dim=-1)  one reduction kernel
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
	if (kagemm::begin(&c, stream, 2 * kagemm::round256(M * N * sizeof(__half))))
		return -1;
	__half *t1 = kagemm::alloc<__half>(&c, M * N), *t2 = kagemm::alloc<__half>(&c, M * N);
	if (kagemm::gemm<__half>(&c, true, M, N, K, x, w, t1) || kagemm::add_rowvec<__half>(&c, t1, b, t2, M * N, N))
		return -1;
	return kagemm::row_max<__half>(&c, t2, (const __half *)0, y, M, N);
}
