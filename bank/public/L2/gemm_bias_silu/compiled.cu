// gemm_bias_silu, compiled baseline: torch.nn.functional.silu(x @ w.T + b) as torch.compile produces it by default: the GEMM through cuBLAS
// (extern kernel), then one fused kernel for everything after it.
//   t = x @ w.T   cuBLAS (cublasSgemm, fp32, no tf32)
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
	const float *x = (const float *)a->inputs[0].ptr;
	const float *w = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	long long n = M * N;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, kagemm::round256(n * sizeof(float))))
		return -1;
	float *t = kagemm::alloc<float>(&c, n);
	if (kagemm::gemm<float>(&c, true, M, N, K, x, w, t))
		return -1;
	return kagemm::fused<float>(&c, t, b, (const float *)0, (const float *)0, y, n, N, kagemm::op_silu());
}
