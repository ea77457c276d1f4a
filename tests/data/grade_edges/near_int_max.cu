// near_int_max: a CUDA candidate, y = 2141192192 + a (tests/data/tasks_edge/near_int_max):
// every element written; at 16 Mi elements about 8 a call equal the call's int32
// poison, which must not make the grade unwritten_output.
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void near_kernel(const int *__restrict__ a, int *__restrict__ y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = 2141192192 + a[i];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long n = a->params[0];
	near_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>((const int *)a->inputs[0].ptr,
								      (int *)a->outputs[0].ptr, n);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
