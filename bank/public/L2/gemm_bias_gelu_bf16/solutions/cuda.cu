// gemm_bias_gelu_bf16, CUDA solution: torch.nn.functional.gelu(x @ w.T + b).
// A tensor-core (WMMA, fp32 accumulation) GEMM with the epilogue fused into the GEMM's store; no libraries.
// Speed is not tuned (plain bounds-checked loads, no cp.async or wgmma): correct first.
#include <cuda_runtime.h>
#include <stdint.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;
#include "ka_kernel.h"

typedef unsigned short IN_T;
typedef unsigned short OUT_T;
typedef __nv_bfloat16 MMA_T;
#define LD(v) __bfloat162float(__ushort_as_bfloat16(v))
#define ST(v) __bfloat16_as_ushort(__float2bfloat16_rn(v))


// Tensor-core GEMM (WMMA 16x16x16, fp32 accumulators): a block of 4 warps
// computes a 64 x 64 tile, each warp 32 x 32 (2 x 2 fragments). K advances in
// steps of 32: A is staged row-major As[m][k], B as Bs[n][k] (a column-major
// K x N fragment source) whatever its layout in memory, with bounds-checked
// loads (zero outside). After the K loop the accumulators go through shared
// memory so the epilogue sees (m, n) with consecutive threads on consecutive
// columns. DUAL: a second B operand with its own accumulators.
#define TBM 64
#define TBN 64
#define TBK 32
#define TLD (TBK + 8)
#define CLD (TBN + 4)
template <class T, bool BNK, bool DUAL, class Epi>
__global__ void __launch_bounds__(128)
gemm_kernel(const unsigned short *__restrict__ A, const unsigned short *__restrict__ B,
	    const unsigned short *__restrict__ B2, int M, int N, int K, long long sA, long long sB, Epi epi)
{
	__shared__ __align__(32) unsigned short As[TBM][TLD];
	__shared__ __align__(32) unsigned short Bs[TBN][TLD];
	__shared__ __align__(32) unsigned short B2s[DUAL ? TBN : 1][TLD];
	__shared__ __align__(32) float Cs[TBM][CLD];
	const int tid = threadIdx.x, warp = tid >> 5, z = blockIdx.z;
	const int m0 = blockIdx.y * TBM, n0 = blockIdx.x * TBN;
	const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
	A += (long long)z * sA;
	B += (long long)z * sB;
	if (DUAL)
		B2 += (long long)z * sB;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2], acc2[2][2];
#pragma unroll
	for (int i = 0; i < 2; i++)
#pragma unroll
		for (int j = 0; j < 2; j++) {
			wmma::fill_fragment(acc[i][j], 0.0f);
			wmma::fill_fragment(acc2[i][j], 0.0f);
		}
	for (int k0 = 0; k0 < K; k0 += TBK) {
		for (int e = tid; e < TBM * TBK; e += 128) {
			int r = e / TBK, kk = e % TBK, m = m0 + r, k = k0 + kk;
			As[r][kk] = (m < M && k < K) ? A[(long long)m * K + k] : (unsigned short)0;
			int nr = BNK ? r : e % TBN, nk = BNK ? kk : e / TBN;
			int n = n0 + nr, kb = k0 + nk;
			bool ok = n < N && kb < K;
			long long off = BNK ? (long long)n * K + kb : (long long)kb * N + n;
			Bs[nr][nk] = ok ? B[off] : (unsigned short)0;
			if (DUAL)
				B2s[nr][nk] = ok ? B2[off] : (unsigned short)0;
		}
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < TBK; kk += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa[2];
			wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb[2];
#pragma unroll
			for (int i = 0; i < 2; i++)
				wmma::load_matrix_sync(fa[i], (const T *)&As[wm + 16 * i][kk], TLD);
#pragma unroll
			for (int j = 0; j < 2; j++)
				wmma::load_matrix_sync(fb[j], (const T *)&Bs[wn + 16 * j][kk], TLD);
#pragma unroll
			for (int i = 0; i < 2; i++)
#pragma unroll
				for (int j = 0; j < 2; j++)
					wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
			if (DUAL) {
#pragma unroll
				for (int j = 0; j < 2; j++)
					wmma::load_matrix_sync(fb[j], (const T *)&B2s[wn + 16 * j][kk], TLD);
#pragma unroll
				for (int i = 0; i < 2; i++)
#pragma unroll
					for (int j = 0; j < 2; j++)
						wmma::mma_sync(acc2[i][j], fa[i], fb[j], acc2[i][j]);
			}
		}
		__syncthreads();
	}
#pragma unroll
	for (int i = 0; i < 2; i++)
#pragma unroll
		for (int j = 0; j < 2; j++)
			wmma::store_matrix_sync(&Cs[wm + 16 * i][wn + 16 * j], acc[i][j], CLD, wmma::mem_row_major);
	__syncthreads();
	float v1[32];
#pragma unroll
	for (int r = 0; r < 32; r++) {
		int e = tid + 128 * r;
		v1[r] = Cs[e / TBN][e % TBN];
	}
	if (DUAL) {
		__syncthreads(); // everyone has read acc from Cs
#pragma unroll
		for (int i = 0; i < 2; i++)
#pragma unroll
			for (int j = 0; j < 2; j++)
				wmma::store_matrix_sync(&Cs[wm + 16 * i][wn + 16 * j], acc2[i][j], CLD,
							wmma::mem_row_major);
		__syncthreads();
	}
#pragma unroll
	for (int r = 0; r < 32; r++) {
		int e = tid + 128 * r, row = e / TBN, col = e % TBN, m = m0 + row, n = n0 + col;
		if (m < M && n < N)
			epi(v1[r], DUAL ? Cs[row][col] : 0.0f, z, m, n);
	}
}
#define GEMM_THREADS 128
#define GEMM_BM TBM
#define GEMM_BN TBN

struct Epi {
	const IN_T *b, *r;
	OUT_T *y;
	int M, N;
	__device__ void operator()(float acc, float, int z, int m, int n) const
	{
		long long i = ((long long)z * M + m) * N + n;
		float v = acc;
		v += LD(b[n]);
		v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
		y[i] = ST(v);
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w, b; output y.
	int M = (int)a->params[0];
	int N = (int)a->params[1];
	int K = (int)a->params[2];
	const IN_T *x = (const IN_T *)a->inputs[0].ptr;
	const IN_T *w = (const IN_T *)a->inputs[1].ptr;
	const IN_T *b = (const IN_T *)a->inputs[2].ptr;
	OUT_T *y = (OUT_T *)a->outputs[0].ptr;
	Epi epi = {b, 0, y, M, N};
	dim3 grid((N + GEMM_BN - 1) / GEMM_BN, (M + GEMM_BM - 1) / GEMM_BM, 1);
	gemm_kernel<MMA_T, true, false, Epi><<<grid, GEMM_THREADS, 0, stream>>>(x, w, w, M, N, K, 0, 0, epi);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
