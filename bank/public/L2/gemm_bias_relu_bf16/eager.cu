// gemm_bias_relu_bf16, eager baseline: torch.relu(x @ w.T + b) as PyTorch eager runs it: one library call or kernel per op,
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
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)a->inputs[0].ptr;
	const __nv_bfloat16 *w = (const __nv_bfloat16 *)a->inputs[1].ptr;
	const __nv_bfloat16 *b = (const __nv_bfloat16 *)a->inputs[2].ptr;
	__nv_bfloat16 *y = (__nv_bfloat16 *)a->outputs[0].ptr;
	long long n = M * N;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, 2 * kagemm::round256(n * sizeof(__nv_bfloat16))))
		return -1;
	__nv_bfloat16 *t0 = kagemm::alloc<__nv_bfloat16>(&c, n);
	__nv_bfloat16 *t1 = kagemm::alloc<__nv_bfloat16>(&c, n);
	if (kagemm::gemm<__nv_bfloat16>(&c, true, M, N, K, x, w, t0) ||
	    kagemm::add_rowvec<__nv_bfloat16>(&c, t0, b, t1, n, N))
		return -1;
	return kagemm::unary<__nv_bfloat16>(&c, t1, y, n, kagemm::op_relu());
}
