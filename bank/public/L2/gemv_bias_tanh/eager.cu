// gemv_bias_tanh, eager baseline: torch.tanh(w @ x + b) as PyTorch eager runs it: one library call or kernel per op,
// intermediates as full tensors in scratch memory.
//   t1 = w @ x    cublasSgemv (torch.mv), fp32, no tf32
//   t2 = t1 + b
//   y = tanh(t2)
// Trusted code: it runs natively in the runner (bank/lib/gemm.cuh has the
// math modes and the kernels).
#include "gemm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, K; inputs w, x, b; output y.
	long long N = a->params[0];
	long long K = a->params[1];
	const float *w = (const float *)a->inputs[0].ptr;
	const float *x = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, 2 * kagemm::round256(N * sizeof(float))))
		return -1;
	float *t1 = kagemm::alloc<float>(&c, N), *t2 = kagemm::alloc<float>(&c, N);
	if (kagemm::gemv_f32(&c, N, K, w, x, t1) || kagemm::add_rowvec<float>(&c, t1, b, t2, N, N))
		return -1;
	return kagemm::unary<float>(&c, t2, y, N, kagemm::op_tanh());
}
