// layer_norm, CUDA solution: one block of 256 threads per row; pass 1 sums x
// (fp32, per-thread partials then a tree), pass 2 sums (x - mean)^2 (two-pass
// variance: no cancellation at a large mean), pass 3 writes. Rows re-read in
// passes 2 and 3 come from L1/L2.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include "ka_kernel.h"

#define THREADS 256

// Block-wide sum or max; every thread gets it. red: 32 floats.
template <bool IS_MAX> __device__ __forceinline__ float block_reduce(float v, float *red)
{
	for (int o = 16; o > 0; o >>= 1) {
		float u = __shfl_xor_sync(0xffffffffu, v, o);
		v = IS_MAX ? fmaxf(v, u) : v + u;
	}
	__syncthreads();
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = v;
	__syncthreads();
	v = (threadIdx.x & 31) < THREADS / 32 ? red[threadIdx.x & 31] : (IS_MAX ? -INFINITY : 0.f);
	for (int o = 16; o > 0; o >>= 1) {
		float u = __shfl_xor_sync(0xffffffffu, v, o);
		v = IS_MAX ? fmaxf(v, u) : v + u;
	}
	return v;
}

__global__ void __launch_bounds__(THREADS)
layer_norm(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
	   float *__restrict__ y, long long C)
{
	__shared__ float red[32];
	const float *xr = x + (long long)blockIdx.x * C;
	float *yr = y + (long long)blockIdx.x * C;
	float s = 0.f;
	for (long long c = threadIdx.x; c < C; c += THREADS)
		s += xr[c];
	float mean = block_reduce<false>(s, red) / (float)C;
	float q = 0.f;
	for (long long c = threadIdx.x; c < C; c += THREADS) {
		float d = xr[c] - mean;
		q += d * d;
	}
	float rstd = rsqrtf(block_reduce<false>(q, red) / (float)C + 1e-5f);
	for (long long c = threadIdx.x; c < C; c += THREADS)
		yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x, w, b; output y.
	long long R = a->params[0], C = a->params[1];
	layer_norm<<<(unsigned)R, THREADS, 0, stream>>>((const float *)a->inputs[0].ptr,
							(const float *)a->inputs[1].ptr,
							(const float *)a->inputs[2].ptr,
							(float *)a->outputs[0].ptr, C);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
