// gemm_tall_skinny_f16, eager baseline: torch.relu(x @ w.T + b) as PyTorch eager
// runs it: one library call or kernel per op, intermediates as full fp16
// tensors in scratch memory.
//   t0 = x @ w.T    cuBLAS (cublasGemmEx, fp32 accumulation: bank/lib/gemm.cuh)
//   t1 = t0 + b     TensorIterator's unrolled kernel for a [N] vector broadcast
//                   over rows (not vectorizable: bank/lib/eager.cuh
//                   ka::binary_bcast_row)
//   y = relu(t1)    TensorIterator's vectorized kernel, 8 fp16 a 16-byte vector
//                   (ka::unary)
// Expected time (bench M = 1048576, N = 64, K = 256): the GEMM reads x (537 MB)
// and writes t0 (134 MB), each pointwise op reads and writes 134 MB: 1208 MB;
// PyTorch takes 396.1 us on the H200 (the GEMM about 160 us as in the compiled
// baseline, the relu about 65 us, the broadcast add the rest).
// Trusted code: it runs natively in the runner.
#include "eager.cuh"
#include "gemm.cuh"

struct add_f {
	__device__ float operator()(float a, float b) const { return a + b; }
};
struct relu_f {
	__device__ float operator()(float v) const { return v > 0.0f ? v : 0.0f; }
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w, b; output y.
	long long M = a->params[0], N = a->params[1], K = a->params[2], n = M * N;
	const __half *x = (const __half *)a->inputs[0].ptr;
	const __half *w = (const __half *)a->inputs[1].ptr;
	const __half *b = (const __half *)a->inputs[2].ptr;
	__half *y = (__half *)a->outputs[0].ptr;
	kagemm::ctx c;
	if (kagemm::begin(&c, stream, 2 * kagemm::round256(n * sizeof(__half))))
		return -1;
	__half *t0 = kagemm::alloc<__half>(&c, n);
	__half *t1 = kagemm::alloc<__half>(&c, n);
	if (!t0 || !t1 || kagemm::gemm<__half>(&c, true, M, N, K, x, w, t0) ||
	    ka::binary_bcast_row((const __half *)t0, b, t1, n, N, add_f(), stream))
		return -1;
	return ka::unary((const __half *)t1, y, n, relu_f(), stream);
}
