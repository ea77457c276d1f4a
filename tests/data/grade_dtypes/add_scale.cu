// expect: ok
// z = 2x + y with an fp16 input: grading it checks the device's fp16 and fp32
// generators against the CPU's, bit for bit (the input hash of every untimed call).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void k(long long n, const float *x, const __half *y, float *z)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < n)
		z[i] = 2.0f * x[i] + __half2float(y[i]);
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long n = a->params[0];
	k<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(n, (const float *)a->inputs[0].ptr,
							    (const __half *)a->inputs[1].ptr,
							    (float *)a->outputs[0].ptr);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
