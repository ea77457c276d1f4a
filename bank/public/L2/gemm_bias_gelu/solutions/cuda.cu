// gemm_bias_gelu, CUDA solution: Y = gelu(X @ W.T + b), X [M, K], W [N, K].
//
// A tiled fp32 SGEMM with the epilogue fused, no libraries and no tensor
// cores (tf32 would be outside the task's tolerance):
//   - a block of 256 threads computes a 128 x 128 tile of Y; each thread an
//     8 x 8 sub-tile (rows ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns
//     likewise with tx), so every shared-memory float4 it reads feeds 16 FMAs;
//   - K advances in steps of 8: each thread loads one float4 of X and one of
//     W per step (both operands are K-contiguous), stores them transposed
//     into shared memory (As[k][m], Bs[k][n]); two shared buffers, and the
//     next step's global loads are issued before the current step's math;
//   - epilogue: + b[n], exact erf GELU, float4 stores where N allows.
// Edges (M, N, K not multiples of the tile) are zero-filled on load and
// masked on store. Loads use float4 when K % 4 == 0 and X, W are 16-byte
// aligned, scalar loads otherwise.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

#define BM 128
#define BN 128
#define BK 8
#define THREADS 256

__device__ __forceinline__ float gelu_f(float v)
{
	return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

// 4 consecutive K elements of one row starting at p; `rem` elements of the row
// are left from p on. Zero past the row's end or for a row outside the matrix.
template <bool VEC>
__device__ __forceinline__ float4 load4(const float *p, bool row_ok, int rem)
{
	float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
	if (!row_ok || rem <= 0)
		return v;
	if (VEC) // K % 4 == 0: the 4 elements are all in the row
		return __ldg((const float4 *)p);
	v.x = __ldg(p);
	if (rem > 1)
		v.y = __ldg(p + 1);
	if (rem > 2)
		v.z = __ldg(p + 2);
	if (rem > 3)
		v.w = __ldg(p + 3);
	return v;
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS)
gemm_bias_gelu(const float *__restrict__ X, const float *__restrict__ W,
	       const float *__restrict__ b, float *__restrict__ Y, int M, int N, int K,
	       bool vec_store)
{
	__shared__ __align__(16) float As[2][BK][BM];
	__shared__ __align__(16) float Bs[2][BK][BN];
	const int tid = threadIdx.x;
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

	// Loader: thread tid loads row tid / 2, K offset (tid % 2) * 4 of the step.
	const int lrow = tid >> 1, lk = (tid & 1) * 4;
	const bool xrow_ok = m0 + lrow < M, wrow_ok = n0 + lrow < N;
	const float *xp = X + (size_t)(xrow_ok ? m0 + lrow : 0) * K + lk;
	const float *wp = W + (size_t)(wrow_ok ? n0 + lrow : 0) * K + lk;

	// Compute: thread (ty, tx) of a 16 x 16 grid.
	const int ty = tid >> 4, tx = tid & 15;
	float acc[8][8];
#pragma unroll
	for (int i = 0; i < 8; i++)
#pragma unroll
		for (int j = 0; j < 8; j++)
			acc[i][j] = 0.f;

	const int steps = (K + BK - 1) / BK;
	float4 xa = load4<VEC>(xp, xrow_ok, K - lk);
	float4 wa = load4<VEC>(wp, wrow_ok, K - lk);
	for (int s = 0; s < steps; s++) {
		const int buf = s & 1;
		// Every thread finished reading `buf` two steps ago (barrier below).
		As[buf][lk + 0][lrow] = xa.x;
		As[buf][lk + 1][lrow] = xa.y;
		As[buf][lk + 2][lrow] = xa.z;
		As[buf][lk + 3][lrow] = xa.w;
		Bs[buf][lk + 0][lrow] = wa.x;
		Bs[buf][lk + 1][lrow] = wa.y;
		Bs[buf][lk + 2][lrow] = wa.z;
		Bs[buf][lk + 3][lrow] = wa.w;
		__syncthreads();
		if (s + 1 < steps) { // next step's loads overlap this step's math
			int k1 = (s + 1) * BK;
			xa = load4<VEC>(xp + k1, xrow_ok, K - k1 - lk);
			wa = load4<VEC>(wp + k1, wrow_ok, K - k1 - lk);
		}
#pragma unroll
		for (int k = 0; k < BK; k++) {
			float4 a0 = *(const float4 *)&As[buf][k][ty * 4];
			float4 a1 = *(const float4 *)&As[buf][k][64 + ty * 4];
			float4 b0 = *(const float4 *)&Bs[buf][k][tx * 4];
			float4 b1 = *(const float4 *)&Bs[buf][k][64 + tx * 4];
			float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
			float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
			for (int i = 0; i < 8; i++)
#pragma unroll
				for (int j = 0; j < 8; j++)
					acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
		}
	}

	// Epilogue: bias, GELU, store (two runs of 4 columns per row).
#pragma unroll
	for (int i = 0; i < 8; i++) {
		int m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
		if (m >= M)
			continue;
		float *yr = Y + (size_t)m * N;
#pragma unroll
		for (int h = 0; h < 2; h++) {
			int n = n0 + h * 64 + tx * 4;
			if (vec_store && n + 3 < N) {
				float4 bb = __ldg((const float4 *)(b + n));
				float4 o;
				o.x = gelu_f(acc[i][h * 4 + 0] + bb.x);
				o.y = gelu_f(acc[i][h * 4 + 1] + bb.y);
				o.z = gelu_f(acc[i][h * 4 + 2] + bb.z);
				o.w = gelu_f(acc[i][h * 4 + 3] + bb.w);
				*(float4 *)(yr + n) = o;
			} else {
#pragma unroll
				for (int j = 0; j < 4; j++)
					if (n + j < N)
						yr[n + j] = gelu_f(acc[i][h * 4 + j] + __ldg(b + n + j));
			}
		}
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x [M, K], w [N, K], b [N]; output y [M, N].
	int M = (int)a->params[0], N = (int)a->params[1], K = (int)a->params[2];
	const float *x = (const float *)a->inputs[0].ptr;
	const float *w = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	bool vec = K % 4 == 0 && (((uintptr_t)x | (uintptr_t)w) & 15) == 0;
	bool vec_store = N % 4 == 0 && (((uintptr_t)y | (uintptr_t)b) & 15) == 0;
	dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
	if (vec)
		gemm_bias_gelu<true><<<grid, THREADS, 0, stream>>>(x, w, b, y, M, N, K, vec_store);
	else
		gemm_bias_gelu<false><<<grid, THREADS, 0, stream>>>(x, w, b, y, M, N, K, vec_store);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
