// bmm_scale, compiled baseline: torch.matmul(q, key.mT) * 0.125 as torch.compile produces it by default: the GEMM through cuBLAS
// (extern kernel), then one fused kernel for everything after it.
//   t = q @ key.mT   cuBLAS (cublasSgemmStridedBatched, fp32, no tf32)
//   s = t scale   one fused pointwise kernel
// Trusted code: it runs natively in the runner (bank/lib/gemm.cuh has the
// math modes and the kernels).
#include "gemm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params Bt, M, N, K; inputs q, key; output s.
	long long Bt = a->params[0];
	long long M = a->params[1];
	long long N = a->params[2];
	long long K = a->params[3];
	const float *q = (const float *)a->inputs[0].ptr;
	const float *key = (const float *)a->inputs[1].ptr;
	float *s = (float *)a->outputs[0].ptr;
	long long n = Bt * M * N;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, kagemm::round256(n * sizeof(float))))
		return -1;
	float *t = kagemm::alloc<float>(&c, n);
	if (kagemm::gemm<float>(&c, true, M, N, K, q, key, t, Bt, M * K, N * K, M * N))
		return -1;
	return kagemm::fused<float>(&c, t, (const float *)0, (const float *)0, (const float *)0, s, n, N, kagemm::op_scale{0.125f});
}
