// transpose_2d, CUDA solution: x.t().contiguous().
//
// 64 x 64 tiles through shared memory, 256 threads (32 x 8) per tile. Each
// warp reads 64 consecutive floats of a row of x as float2 (256 bytes,
// coalesced) and writes 64 consecutive floats of a row of y the same way,
// the tile transposed in shared memory in between (row pitch 65 floats, so
// the column reads spread over the banks). Sizes or pointers that do not
// allow float2 take a scalar path with the same tiles. One read of x, one
// write of y.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int T = 64;	// tile side
static const int TY = 8;	// thread rows per block

template <bool VEC>
__global__ void __launch_bounds__(32 * TY)
transpose_kernel(const float *__restrict__ x, float *__restrict__ y, long long M, long long N)
{
	__shared__ float tile[T][T + 1];
	const long long m0 = (long long)blockIdx.y * T, n0 = (long long)blockIdx.x * T;
	const int c = 2 * threadIdx.x; // this lane's pair of columns in the tile
#pragma unroll
	for (int k = threadIdx.y; k < T; k += TY) {
		long long m = m0 + k, n = n0 + c;
		if (m >= M)
			break;
		if (VEC && n + 1 < N) {
			float2 v = __ldcs(reinterpret_cast<const float2 *>(x + m * N + n));
			tile[k][c] = v.x;
			tile[k][c + 1] = v.y;
		} else {
			if (n < N)
				tile[k][c] = __ldcs(x + m * N + n);
			if (n + 1 < N)
				tile[k][c + 1] = __ldcs(x + m * N + n + 1);
		}
	}
	__syncthreads();
#pragma unroll
	for (int k = threadIdx.y; k < T; k += TY) {
		long long n = n0 + k, m = m0 + c;
		if (n >= N)
			break;
		if (VEC && m + 1 < M) {
			__stcs(reinterpret_cast<float2 *>(y + n * M + m), make_float2(tile[c][k], tile[c + 1][k]));
		} else {
			if (m < M)
				y[n * M + m] = tile[c][k];
			if (m + 1 < M)
				y[n * M + m + 1] = tile[c + 1][k];
		}
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N; input x [M, N] fp32; output y [N, M] fp32.
	long long M = a->params[0], N = a->params[1];
	const float *x = (const float *)a->inputs[0].ptr;
	float *y = (float *)a->outputs[0].ptr;
	dim3 grid((unsigned)((N + T - 1) / T), (unsigned)((M + T - 1) / T)), block(32, TY);
	if (M % 2 == 0 && N % 2 == 0 && ((uintptr_t)x & 7) == 0 && ((uintptr_t)y & 7) == 0)
		transpose_kernel<true><<<grid, block, 0, stream>>>(x, y, M, N);
	else
		transpose_kernel<false><<<grid, block, 0, stream>>>(x, y, M, N);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
