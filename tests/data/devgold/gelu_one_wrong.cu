// tests/data/devgold/gelu_one_wrong.cu: the gelu_bias_scale solution, wrong
// in exactly one element at the benchmark shape only (R = C = 4096): y[12345677]
// (row 3014, column 333: no edge) gets 1 added after the right kernel ran.
// Every check shape is right, and a sampled check of the benchmark shape
// (256 random items and the edges of 16 Mi) misses it; the device check of
// every element (docs/grader.md "The gold's cost") must give wrong_answer
// with index 12345677 as its evidence. tests/gpu/grade_devgold.sh.
//
// Memory-bound, so the kernel only has to stream x and y at full bandwidth:
// each thread loads two float4 of x (16-byte loads, both issued before any
// math so more bytes are in flight), reads scale and bias (C floats, they
// stay in L1/L2) for the 4 columns of each, and stores two float4 of y with
// streaming stores. The float4s index the flat [R * C] array, so C need not be
// a multiple of 4: a float4 may cross a row, the column just wraps. The last
// n % 4 elements go through a scalar kernel. fp32 math with erff (exact GELU).
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int THREADS = 256, VEC_PER_THREAD = 2;

__device__ __forceinline__ float gelu_f(float v)
{
	return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

// One float4 of x: flat elements [4q, 4q + 4), first column c.
__device__ __forceinline__ float4 chain4(float4 v, long long c, long long C,
					 const float *__restrict__ scale,
					 const float *__restrict__ bias)
{
	float r[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
	for (int j = 0; j < 4; j++) {
		r[j] = gelu_f(r[j] * __ldg(scale + c) + __ldg(bias + c));
		if (++c == C)
			c = 0;
	}
	return make_float4(r[0], r[1], r[2], r[3]);
}

__global__ void __launch_bounds__(THREADS)
gelu_vec(const float4 *__restrict__ x, const float *__restrict__ scale,
	 const float *__restrict__ bias, float4 *__restrict__ y, long long n4, long long C)
{
	long long q = ((long long)blockIdx.x * THREADS * VEC_PER_THREAD) + threadIdx.x;
	float4 v[VEC_PER_THREAD];
#pragma unroll
	for (int j = 0; j < VEC_PER_THREAD; j++) {
		long long qj = q + (long long)j * THREADS;
		if (qj < n4)
			v[j] = __ldcs(x + qj); // read once: do not keep in cache
	}
#pragma unroll
	for (int j = 0; j < VEC_PER_THREAD; j++) {
		long long qj = q + (long long)j * THREADS;
		if (qj < n4)
			__stcs(y + qj, chain4(v[j], (qj * 4) % C, C, scale, bias));
	}
}

// Elements [first, n) one per thread: the tail, or everything when the
// pointers are not 16-byte aligned.
__global__ void gelu_scalar(const float *__restrict__ x, const float *__restrict__ scale,
			    const float *__restrict__ bias, float *__restrict__ y, long long first,
			    long long n, long long C)
{
	long long i = first + (long long)blockIdx.x * THREADS + threadIdx.x;
	if (i < n) {
		long long c = i % C;
		y[i] = gelu_f(x[i] * scale[c] + bias[c]);
	}
}

#define WRONG_AT 12345677LL

__global__ void poke(float *y) { y[WRONG_AT] += 1.0f; }

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], scale [C], bias [C]; output y.
	long long R = a->params[0], C = a->params[1], n = R * C;
	const float *x = (const float *)a->inputs[0].ptr;
	const float *scale = (const float *)a->inputs[1].ptr;
	const float *bias = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	bool aligned = (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
	long long n4 = aligned ? n / 4 : 0;
	if (n4 > 0) {
		long long per_block = (long long)THREADS * VEC_PER_THREAD;
		unsigned blocks = (unsigned)((n4 + per_block - 1) / per_block);
		gelu_vec<<<blocks, THREADS, 0, stream>>>((const float4 *)x, scale, bias, (float4 *)y,
							  n4, C);
	}
	long long rest = n - 4 * n4;
	if (rest > 0) {
		unsigned blocks = (unsigned)((rest + THREADS - 1) / THREADS);
		gelu_scalar<<<blocks, THREADS, 0, stream>>>(x, scale, bias, y, 4 * n4, n, C);
	}
	if (R == 4096 && C == 4096)
		poke<<<1, 1, 0, stream>>>(y);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
