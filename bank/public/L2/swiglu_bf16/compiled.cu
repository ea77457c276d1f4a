// swiglu_bf16, compiled baseline: torch.nn.functional.silu(x @ w1.T) * (x @ w3.T) as torch.compile produces it by default: the GEMM through cuBLAS
// (extern kernel), then one fused kernel for everything after it.
//   g = x @ w1.T, u = x @ w3.T   two cuBLAS calls (Inductor keeps them separate)
//   y = silu(g) * u               one fused pointwise kernel
// Trusted code: it runs natively in the runner (bank/lib/gemm.cuh has the
// math modes and the kernels).
#include "gemm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, H, K; inputs x, w1, w3; output y.
	long long M = a->params[0];
	long long H = a->params[1];
	long long K = a->params[2];
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)a->inputs[0].ptr;
	const __nv_bfloat16 *w1 = (const __nv_bfloat16 *)a->inputs[1].ptr;
	const __nv_bfloat16 *w3 = (const __nv_bfloat16 *)a->inputs[2].ptr;
	__nv_bfloat16 *y = (__nv_bfloat16 *)a->outputs[0].ptr;
	long long n = M * H;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, 2 * kagemm::round256(n * sizeof(__nv_bfloat16))))
		return -1;
	__nv_bfloat16 *g = kagemm::alloc<__nv_bfloat16>(&c, n), *u = kagemm::alloc<__nv_bfloat16>(&c, n);
	if (kagemm::gemm<__nv_bfloat16>(&c, true, M, H, K, x, w1, g) || kagemm::gemm<__nv_bfloat16>(&c, true, M, H, K, x, w3, u))
		return -1;
	return kagemm::fused_vec<__nv_bfloat16>(&c, g, (const __nv_bfloat16 *)0, (const __nv_bfloat16 *)0, u, y, n, H, kagemm::op_silu());
}
