// cross_entropy, CUDA solution: one block of 256 threads per row, one read of
// the row: an online logsumexp (running max, rescaled sum; float4 streaming
// loads when aligned), merged by shuffles and shared memory; thread 0 writes
// lse - x[t]. fp32 throughout.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include "ka_kernel.h"

#define THREADS 256


// Online (max, sum of exp(x - max)) merge.
__device__ __forceinline__ void merge(float &m, float &s, float m2, float s2)
{
	float mn = fmaxf(m, m2);
	if (mn == -INFINITY)
		return;
	s = s * __expf(m - mn) + s2 * __expf(m2 - mn);
	m = mn;
}

// Row logsumexp of xr[0 .. C), for the whole block: every thread gets it.
// One read of the row: per-thread (max, sum) over float4s when aligned.
static __device__ __forceinline__ float row_lse(const float *__restrict__ xr, long long C, float *red)
{
	float m = -INFINITY, s = 0.f;
	bool vec = C % 4 == 0 && ((uintptr_t)xr & 15) == 0;
	if (vec) {
		for (long long c = 4 * threadIdx.x; c < C; c += 4 * THREADS) {
			float4 v = __ldcs((const float4 *)(xr + c));
			float mv = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
			float sv = __expf(v.x - mv) + __expf(v.y - mv) + __expf(v.z - mv) + __expf(v.w - mv);
			merge(m, s, mv, sv);
		}
	} else {
		for (long long c = threadIdx.x; c < C; c += THREADS)
			merge(m, s, xr[c], 1.f);
	}
	for (int o = 16; o > 0; o >>= 1)
		merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	__syncthreads();
	if ((threadIdx.x & 31) == 0) {
		red[threadIdx.x >> 5] = m;
		red[32 + (threadIdx.x >> 5)] = s;
	}
	__syncthreads();
	int l = threadIdx.x & 31;
	m = l < THREADS / 32 ? red[l] : -INFINITY;
	s = l < THREADS / 32 ? red[32 + l] : 0.f;
	for (int o = 16; o > 0; o >>= 1)
		merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	return m + logf(s);
}

__global__ void __launch_bounds__(THREADS)
xent(const float *__restrict__ x, const int64_t *__restrict__ t, float *__restrict__ loss, long long V)
{
	__shared__ float red[64];
	const float *xr = x + (long long)blockIdx.x * V;
	float lse = row_lse(xr, V, red);
	if (threadIdx.x == 0)
		loss[blockIdx.x] = lse - xr[t[blockIdx.x]];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, V; inputs x, t; output loss.
	long long R = a->params[0], V = a->params[1];
	xent<<<(unsigned)R, THREADS, 0, stream>>>((const float *)a->inputs[0].ptr,
						  (const int64_t *)a->inputs[1].ptr,
						  (float *)a->outputs[0].ptr, V);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
