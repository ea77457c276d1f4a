// expect: unwritten_output
// Computes nothing: copies whatever the workspace held (hoping for an earlier call's result).
#include <cuda_runtime.h>
#include "ka_kernel.h"
__global__ void k(long long R, long long C, const float *x, const float *s, const float *b,
		  float *y)
{
	long long n = R * C, i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i] * s[i % C] + b[i % C];
	y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
}

__global__ void copy(const float *from, float *to, long long n)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < n)
		to[i] = from[i];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long R = a->params[0], C = a->params[1], n = R * C;
	const float *x = (const float *)a->inputs[0].ptr, *s = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	void *ws = ka_workspace((size_t)n * sizeof(float));
	if (!ws)
		return -1;
	copy<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>((const float *)ws, y, n);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
