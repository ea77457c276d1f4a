// gemm_tall_skinny_f16, compiled baseline: torch.relu(x @ w.T + b) as
// torch.compile produces it by default: the GEMM through cuBLAS (an extern
// kernel), then one fused pointwise kernel for everything after it.
//   t = x @ w.T           cuBLAS (cublasGemmEx, fp32 accumulation: bank/lib/gemm.cuh)
//   y = relu(t + b[col])  ka::pointwise (bank/lib/compiled.cuh): 8 fp16 a
//                         16-byte vector, fp32 math rounded once, the column
//                         from a 32-bit fast division (Triton's `% 64` on the
//                         static shape: bank/lib/intdiv.cuh)
// Expected time (bench M = 1048576, N = 64, K = 256): the GEMM moves 671 MB
// (x read, t written), the pointwise kernel 268 MB; torch.compile takes
// 233.1 us on the H200 (about 4 TB/s over both).
// Trusted code: it runs natively in the runner.
#include "compiled.cuh"
#include "gemm.cuh"
#include "intdiv.cuh"

struct bias_relu_f {
	const __half *b;
	ka::fast_div by_n;
	__device__ float operator()(float v, long long i) const
	{
		float s = v + __half2float(b[by_n.mod(i)]);
		return s > 0.0f ? s : 0.0f;
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w, b; output y.
	long long M = a->params[0], N = a->params[1], K = a->params[2], n = M * N;
	const __half *x = (const __half *)a->inputs[0].ptr;
	const __half *w = (const __half *)a->inputs[1].ptr;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, kagemm::round256(n * sizeof(__half))))
		return -1;
	__half *t = kagemm::alloc<__half>(&c, n);
	if (!t || kagemm::gemm<__half>(&c, true, M, N, K, x, w, t))
		return -1;
	bias_relu_f f = {(const __half *)a->inputs[2].ptr, ka::make_fast_div(N, n)};
	return ka::pointwise((const __half *)t, (__half *)a->outputs[0].ptr, n, f, stream);
}
