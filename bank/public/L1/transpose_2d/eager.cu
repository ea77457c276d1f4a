// transpose_2d, eager baseline: x.t().contiguous() as PyTorch eager runs it:
// one copy kernel over the transposed view (TensorIterator's
// elementwise_kernel with an offset calculator: writes contiguous, reads
// with a stride of N elements; bank/lib/eager.cuh strided_copy).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N; input x [M, N] fp32; output y [N, M] fp32.
	long long M = a->params[0], N = a->params[1];
	const long long d[3] = {1, N, M};  // y viewed as [1, N, M]
	const long long st[3] = {0, 1, N}; // x's element strides for (0, n, m)
	return ka::strided_copy((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, d, st, stream);
}
