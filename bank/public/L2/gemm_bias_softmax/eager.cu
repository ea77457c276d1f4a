// gemm_bias_softmax, eager baseline: torch.softmax(x @ w.T + b, dim=-1) as PyTorch eager runs it: one library call or kernel per op,
// intermediates as full tensors in scratch memory.
//   t1 = x @ w.T   cuBLAS (cublasSgemm, fp32, no tf32)
//   t2 = t1 + b
//   y = softmax(t2, dim=-1)  one row kernel (PyTorch's softmax is one)
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
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, 2 * kagemm::round256(M * N * sizeof(float))))
		return -1;
	float *t1 = kagemm::alloc<float>(&c, M * N), *t2 = kagemm::alloc<float>(&c, M * N);
	if (kagemm::gemm<float>(&c, true, M, N, K, x, w, t1) || kagemm::add_rowvec<float>(&c, t1, b, t2, M * N, N))
		return -1;
	return kagemm::row_softmax<float>(&c, t2, (const float *)0, y, M, N);
}
