// expect: ok
// fp32 GEMM accumulating k from K-1 down to 0: another summation order must pass.
#include <cuda_runtime.h>
#include <mma.h>
#include "ka_kernel.h"

__global__ void k(long long M, long long N, long long K, const float *x, const float *w,
		  const float *b, float *y)
{
	long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x, i = blockIdx.y;
	if (j >= N || i >= M)
		return;
	float acc = 0.0f;
	for (long long k = K - 1; k >= 0; k--)
		acc = fmaf(x[i * K + k], w[j * K + k], acc);
	float v = acc + b[j];
	y[i * N + j] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long M = a->params[0], N = a->params[1], K = a->params[2];
	dim3 grid((unsigned)((N + 127) / 128), (unsigned)M);
	k<<<grid, 128, 0, stream>>>(M, N, K, (const float *)a->inputs[0].ptr,
				   (const float *)a->inputs[1].ptr, (const float *)a->inputs[2].ptr,
				   (float *)a->outputs[0].ptr);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
