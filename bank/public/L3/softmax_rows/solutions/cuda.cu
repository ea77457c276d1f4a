// softmax_rows, CUDA solution: Y[r, :] = softmax(X[r, :]).
//
// One block of 256 threads per row, and the row lives in registers: each
// thread loads its PER vectors of VW floats (float4 when C % 4 == 0 and the
// pointers are 16-byte aligned), so X is read from global memory exactly once
// and Y written once, the minimum traffic. Then a block max (warp shuffles +
// shared memory), e = exp(x - max) in registers, a block sum, and the stores
// of e * (1 / sum). PER is picked per call from the row length, up to 8 float4
// (C <= 8192) or 32 floats per thread; longer rows fall back to a kernel that
// reads the row three times (max, sum, write) from global memory / L2.
// fp32 with expf; partial sums per thread, then a tree, keep the summation
// error far inside the tolerance.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include "ka_kernel.h"

#define THREADS 256

template <bool IS_MAX>
__device__ __forceinline__ float warp_reduce(float v)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) {
		float u = __shfl_xor_sync(0xffffffffu, v, o);
		v = IS_MAX ? fmaxf(v, u) : v + u;
	}
	return v;
}

// Block-wide max or sum; every thread gets the result. red: 32 floats.
template <bool IS_MAX>
__device__ __forceinline__ float block_reduce(float v, float *red)
{
	v = warp_reduce<IS_MAX>(v);
	__syncthreads(); // red[] may still be read by the previous reduction
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = v;
	__syncthreads();
	v = (threadIdx.x & 31) < THREADS / 32 ? red[threadIdx.x & 31] : (IS_MAX ? -INFINITY : 0.f);
	return warp_reduce<IS_MAX>(v);
}

// Row in registers: element c of the row is held by thread (c / VW) % THREADS
// as vector (c / VW) / THREADS. Requires C <= PER * VW * THREADS.
template <int VW, int PER>
__global__ void __launch_bounds__(THREADS)
softmax_reg(const float *__restrict__ x, float *__restrict__ y, long long C)
{
	__shared__ float red[32];
	const float *xr = x + (long long)blockIdx.x * C;
	float *yr = y + (long long)blockIdx.x * C;
	float v[PER][VW];
	float m = -INFINITY;
#pragma unroll
	for (int i = 0; i < PER; i++) {
		long long c = ((long long)i * THREADS + threadIdx.x) * VW;
		if (VW == 4 && c < C) { // C % 4 == 0: the whole float4 is in the row
			float4 q = __ldcs((const float4 *)(xr + c));
			v[i][0] = q.x;
			v[i][1] = q.y;
			v[i][2] = q.z;
			v[i][3] = q.w;
		} else {
#pragma unroll
			for (int j = 0; j < VW; j++)
				v[i][j] = c + j < C ? __ldcs(xr + c + j) : -INFINITY;
		}
#pragma unroll
		for (int j = 0; j < VW; j++)
			m = fmaxf(m, v[i][j]);
	}
	m = block_reduce<true>(m, red);
	float s = 0.f;
#pragma unroll
	for (int i = 0; i < PER; i++)
#pragma unroll
		for (int j = 0; j < VW; j++) {
			v[i][j] = expf(v[i][j] - m); // padding: exp(-inf) = 0
			s += v[i][j];
		}
	s = block_reduce<false>(s, red);
	float inv = 1.f / s;
#pragma unroll
	for (int i = 0; i < PER; i++) {
		long long c = ((long long)i * THREADS + threadIdx.x) * VW;
		if (VW == 4 && c < C) {
			__stcs((float4 *)(yr + c),
			       make_float4(v[i][0] * inv, v[i][1] * inv, v[i][2] * inv, v[i][3] * inv));
		} else {
#pragma unroll
			for (int j = 0; j < VW; j++)
				if (c + j < C)
					__stcs(yr + c + j, v[i][j] * inv);
		}
	}
}

// Any row length: max, sum and write passes over global memory.
__global__ void __launch_bounds__(THREADS)
softmax_long(const float *__restrict__ x, float *__restrict__ y, long long C)
{
	__shared__ float red[32];
	const float *xr = x + (long long)blockIdx.x * C;
	float *yr = y + (long long)blockIdx.x * C;
	float m = -INFINITY;
	for (long long c = threadIdx.x; c < C; c += THREADS)
		m = fmaxf(m, xr[c]);
	m = block_reduce<true>(m, red);
	float s = 0.f;
	for (long long c = threadIdx.x; c < C; c += THREADS)
		s += expf(xr[c] - m);
	s = block_reduce<false>(s, red);
	float inv = 1.f / s;
	for (long long c = threadIdx.x; c < C; c += THREADS)
		yr[c] = expf(xr[c] - m) * inv;
}

template <int VW>
static void launch_reg(int per, unsigned R, const float *x, float *y, long long C,
		       cudaStream_t stream)
{
	switch (per) {
	case 1: softmax_reg<VW, 1><<<R, THREADS, 0, stream>>>(x, y, C); break;
	case 2: softmax_reg<VW, 2><<<R, THREADS, 0, stream>>>(x, y, C); break;
	case 4: softmax_reg<VW, 4><<<R, THREADS, 0, stream>>>(x, y, C); break;
	case 8: softmax_reg<VW, 8><<<R, THREADS, 0, stream>>>(x, y, C); break;
	case 16: softmax_reg<VW, 16><<<R, THREADS, 0, stream>>>(x, y, C); break;
	default: softmax_reg<VW, 32><<<R, THREADS, 0, stream>>>(x, y, C); break;
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C]; output y [R, C].
	long long R = a->params[0], C = a->params[1];
	const float *x = (const float *)a->inputs[0].ptr;
	float *y = (float *)a->outputs[0].ptr;
	bool vec = C % 4 == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
	int vw = vec ? 4 : 1, max_per = vec ? 8 : 32;
	long long need = (C + (long long)vw * THREADS - 1) / ((long long)vw * THREADS);
	int per = 1;
	while (per < need && per < max_per)
		per *= 2;
	if (need > max_per)
		softmax_long<<<(unsigned)R, THREADS, 0, stream>>>(x, y, C);
	else if (vec)
		launch_reg<4>(per, (unsigned)R, x, y, C, stream);
	else
		launch_reg<1>(per, (unsigned)R, x, y, C, stream);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
