// permute_3d, eager baseline: x.permute(2, 0, 1).contiguous() as PyTorch
// eager runs it: one copy kernel over the permuted view (TensorIterator's
// elementwise_kernel with an offset calculator: writes contiguous, reads
// with a stride of C elements; bank/lib/eager.cuh strided_copy). The copy
// moves 2-byte words; the values are fp16.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params A, B, C; input x [A, B, C] fp16; output y [C, A, B] fp16.
	long long A = a->params[0], B = a->params[1], C = a->params[2];
	const long long d[3] = {C, A, B};	   // y's shape
	const long long st[3] = {1, B * C, C}; // x's element strides for (c, a, b)
	return ka::strided_copy((const unsigned short *)a->inputs[0].ptr, (unsigned short *)a->outputs[0].ptr, d, st,
				stream);
}
