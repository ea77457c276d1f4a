// gemm_splitk_bf16, compiled baseline: x @ w.T + b as torch.compile produces it by
// default: Inductor rewrites mm + add into addmm when nothing pointwise
// follows the sum, and addmm with a vector bias runs as one cuBLASLt call
// with the bias in its epilogue (PyTorch's gemm_and_bias):
//   y = x @ w.T + b   cublasLtMatmul, fp32 accumulation, CUBLASLT_EPILOGUE_BIAS
// Trusted code: it runs natively in the runner (bank/lib/gemm.cuh has the
// math modes and the kernels).
#include "gemm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w, b; output y.
	long long M = a->params[0];
	long long N = a->params[1];
	long long K = a->params[2];
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)a->inputs[0].ptr;
	const __nv_bfloat16 *w = (const __nv_bfloat16 *)a->inputs[1].ptr;
	const __nv_bfloat16 *b = (const __nv_bfloat16 *)a->inputs[2].ptr;
	__nv_bfloat16 *y = (__nv_bfloat16 *)a->outputs[0].ptr;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, 0))
		return -1;
	return kagemm::gemm_bias_lt<__nv_bfloat16>(&c, M, N, K, x, w, b, y);
}
