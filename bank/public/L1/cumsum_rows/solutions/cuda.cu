// cumsum_rows, CUDA solution: torch.cumsum(x, dim=-1).
//
// One warp per row, 8 rows per 256-thread block. The warp walks its row in
// chunks of 128 elements, each lane 4 consecutive ones (a float4 when
// C % 4 == 0 and x, y are 16-byte aligned), four chunks loaded before any is
// scanned so that the loads overlap. Per chunk: the lane scans its 4 values,
// a 5-step shuffle scan (then a shift by one lane) gives each lane the sum
// of the lanes before it, the row's carry is added and the chunk is stored;
// the chunk total (lane 31) joins the carry. One read of x, one write of y,
// no shared memory.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int ROWS = 8;   // warps (rows) per block
static const int UNROLL = 4; // chunks in flight per warp

template <bool VEC> __device__ __forceinline__ float4 load4(const float *p, long long c, long long C)
{
	if (VEC && c + 3 < C)
		return __ldcs(reinterpret_cast<const float4 *>(p + c));
	float4 v;
	v.x = c < C ? __ldcs(p + c) : 0.f;
	v.y = c + 1 < C ? __ldcs(p + c + 1) : 0.f;
	v.z = c + 2 < C ? __ldcs(p + c + 2) : 0.f;
	v.w = c + 3 < C ? __ldcs(p + c + 3) : 0.f;
	return v;
}

template <bool VEC> __device__ __forceinline__ void store4(float *p, long long c, long long C, float4 v)
{
	if (VEC && c + 3 < C) {
		__stcs(reinterpret_cast<float4 *>(p + c), v);
		return;
	}
	if (c < C)
		p[c] = v.x;
	if (c + 1 < C)
		p[c + 1] = v.y;
	if (c + 2 < C)
		p[c + 2] = v.z;
	if (c + 3 < C)
		p[c + 3] = v.w;
}

template <bool VEC>
__global__ void __launch_bounds__(32 * ROWS)
cumsum_kernel(const float *__restrict__ x, float *__restrict__ y, long long R, long long C)
{
	long long r = (long long)blockIdx.x * ROWS + threadIdx.y;
	if (r >= R)
		return;
	const float *xr = x + r * C;
	float *yr = y + r * C;
	const int lane = threadIdx.x;
	float carry = 0.f;
	for (long long c0 = 0; c0 < C; c0 += 128 * UNROLL) {
		float4 v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			v[u] = load4<VEC>(xr, c0 + 128 * u + 4 * lane, C);
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			v[u].y += v[u].x;
			v[u].z += v[u].y;
			v[u].w += v[u].z;
			float s = v[u].w; // inclusive scan of the lane totals
#pragma unroll
			for (int o = 1; o < 32; o <<= 1) {
				float t = __shfl_up_sync(0xffffffffu, s, o);
				s += lane >= o ? t : 0.f;
			}
			float ex = __shfl_up_sync(0xffffffffu, s, 1); // the lanes before this one
			float off = carry + (lane ? ex : 0.f);
			float4 w = make_float4(off + v[u].x, off + v[u].y, off + v[u].z, off + v[u].w);
			store4<VEC>(yr, c0 + 128 * u + 4 * lane, C, w);
			carry += __shfl_sync(0xffffffffu, s, 31);
		}
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [R, C] fp32.
	long long R = a->params[0], C = a->params[1];
	const float *x = (const float *)a->inputs[0].ptr;
	float *y = (float *)a->outputs[0].ptr;
	dim3 block(32, ROWS);
	unsigned grid = (unsigned)((R + ROWS - 1) / ROWS);
	if (C % 4 == 0 && ((uintptr_t)x & 15) == 0 && ((uintptr_t)y & 15) == 0)
		cumsum_kernel<true><<<grid, block, 0, stream>>>(x, y, R, C);
	else
		cumsum_kernel<false><<<grid, block, 0, stream>>>(x, y, R, C);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
