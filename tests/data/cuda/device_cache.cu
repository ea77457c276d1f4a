// expect: ok
// Keeps a result in a __device__ variable across calls (ok at the record
// stage; the runner's fresh inputs catch it), and uploads a constant with
// cudaMemcpyToSymbolAsync.
#include <cuda_runtime.h>
#include "ka_kernel.h"

__device__ int computed;
__constant__ float coef[4];

__global__ void add_cached(const float *x, const float *y, float *z, long long n)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (computed)
		return;
	if (i < n)
		z[i] = coef[0] * x[i] + y[i];
	if (i == 0)
		computed = 1;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	static const float one[4] = {1, 1, 1, 1};
	cudaMemcpyToSymbolAsync(coef, one, sizeof one, 0, cudaMemcpyHostToDevice, stream);
	long long n = a->inputs[0].numel;
	add_cached<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(
		(const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr,
		(float *)a->outputs[0].ptr, n);
	return 0;
}
