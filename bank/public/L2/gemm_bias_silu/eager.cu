// gemm_bias_silu, eager baseline: torch.nn.functional.silu(x @ w.T + b) as PyTorch eager runs it: one library call or kernel per op,
// intermediates as full tensors in scratch memory.
//   t0 = x @ w.T   cuBLAS (cublasSgemm, fp32, no tf32)
//   t1 = t0 + b
//   y = t1 then silu
// Trusted code: it runs natively in the runner (bank/lib/gemm.cuh has the
// math modes and the kernels).
#include "gemm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w, b; output y.
	long long M = a->params[0];
	long long N = a->params[1];
	long long K = a->params[2];
	const float *x = (const float *)a->inputs[0].ptr;
	const float *w = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	long long n = M * N;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, 2 * kagemm::round256(n * sizeof(float))))
		return -1;
	float *t0 = kagemm::alloc<float>(&c, n);
	float *t1 = kagemm::alloc<float>(&c, n);
	if (kagemm::gemm<float>(&c, true, M, N, K, x, w, t0) ||
	    kagemm::add_rowvec<float>(&c, t0, b, t1, n, N))
		return -1;
	return kagemm::unary<float>(&c, t1, y, n, kagemm::op_silu());
}
