// gemm_splitk, compiled baseline: x @ w.T + b as torch.compile produces it by
// default: Inductor rewrites mm + add into addmm when nothing pointwise
// follows the sum, and addmm with a vector bias runs as one cuBLASLt call
// with the bias in its epilogue (PyTorch's gemm_and_bias):
//   y = x @ w.T + b   cublasLtMatmul, fp32 compute, no tf32, CUBLASLT_EPILOGUE_BIAS
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
	if (kagemm::begin(&c, stream, 0))
		return -1;
	return kagemm::gemm_bias_lt<float>(&c, M, N, K, x, w, b, y);
}
