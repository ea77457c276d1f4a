// gemv_bias_tanh, compiled baseline: torch.tanh(w @ x + b) as torch.compile produces it by default: the GEMM through cuBLAS
// (extern kernel), then one fused kernel for everything after it.
//   t = w @ x    cublasSgemv, fp32, no tf32
//   y = tanh(t + b) one fused pointwise kernel
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
	if (kagemm::begin(&c, stream, kagemm::round256(N * sizeof(float))))
		return -1;
	float *t = kagemm::alloc<float>(&c, N);
	if (kagemm::gemv_f32(&c, N, K, w, x, t))
		return -1;
	return kagemm::fused<float>(&c, t, b, (const float *)0, (const float *)0, y, N, N, kagemm::op_tanh());
}
