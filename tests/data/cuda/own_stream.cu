// expect: record_error
// Creates its own stream instead of using the given one.
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void add_kernel(const float *x, const float *y, float *z, long long n)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < n)
		z[i] = x[i] + y[i];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	cudaStream_t mine;
	cudaStreamCreate(&mine);
	long long n = a->inputs[0].numel;
	add_kernel<<<(unsigned)((n + 255) / 256), 256, 0, mine>>>(
		(const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr,
		(float *)a->outputs[0].ptr, n);
	return 0;
}
