// tests/data/devgold/silu_one_wrong.cu: the gemm_bias_silu solution (M x N
// = 2048 x 8192 outputs at the benchmark shape, over 1 Mi), wrong in exactly
// one element at the benchmark shape only: y[9876543] (row 1205, column
// 5183: no edge) gets 1 added after the GEMM. The device check of every
// element must give wrong_answer with index 9876543.
// tests/gpu/grade_devgold.sh.
// gemm_bias_silu, CUDA solution: torch.nn.functional.silu(x @ w.T + b).
// An fp32 SIMT (no tf32, fp32 accumulation) GEMM with the epilogue fused into the GEMM's store; no libraries.
// Speed is not tuned (plain bounds-checked loads, no cp.async or wgmma): correct first.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

typedef float IN_T;
typedef float OUT_T;
#define LD(v) (v)
#define ST(v) (v)


// fp32 SIMT GEMM: a block of 256 threads computes a 64 x 64 tile; thread
// (ty, tx) of a 16 x 16 grid owns rows ty + 16 i and columns tx + 16 j
// (i, j < 4), so a warp's stores are 16 consecutive columns. K advances in
// steps of 16 through shared memory; loads are bounds-checked (zero outside).
// DUAL: a second B operand (same layout) with its own accumulators.
#define BM 64
#define BN 64
#define BK 16
template <bool BNK, bool DUAL, class Epi>
__global__ void __launch_bounds__(256)
gemm_kernel(const float *__restrict__ A, const float *__restrict__ B, const float *__restrict__ B2,
	    int M, int N, int K, long long sA, long long sB, Epi epi)
{
	__shared__ float As[BK][BM + 4];
	__shared__ float Bs[BK][BN + 4];
	__shared__ float B2s[DUAL ? BK : 1][BN + 4];
	const int tid = threadIdx.x, z = blockIdx.z;
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
	A += (long long)z * sA;
	B += (long long)z * sB;
	if (DUAL)
		B2 += (long long)z * sB;
	const int ty = tid >> 4, tx = tid & 15;
	float acc[4][4], acc2[4][4];
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
			acc[i][j] = acc2[i][j] = 0.0f;
	for (int k0 = 0; k0 < K; k0 += BK) {
		for (int e = tid; e < BM * BK; e += 256) {
			int r = e / BK, kk = e % BK, m = m0 + r, k = k0 + kk;
			As[kk][r] = (m < M && k < K) ? A[(long long)m * K + k] : 0.0f;
			int nr = BNK ? r : e % BN, nk = BNK ? kk : e / BN;
			int n = n0 + nr, kb = k0 + nk;
			bool ok = n < N && kb < K;
			long long off = BNK ? (long long)n * K + kb : (long long)kb * N + n;
			Bs[nk][nr] = ok ? B[off] : 0.0f;
			if (DUAL)
				B2s[nk][nr] = ok ? B2[off] : 0.0f;
		}
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < BK; kk++) {
			float av[4], bv[4], b2v[4];
#pragma unroll
			for (int i = 0; i < 4; i++)
				av[i] = As[kk][ty + 16 * i];
#pragma unroll
			for (int j = 0; j < 4; j++) {
				bv[j] = Bs[kk][tx + 16 * j];
				b2v[j] = DUAL ? B2s[kk][tx + 16 * j] : 0.0f;
			}
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++) {
					acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
					if (DUAL)
						acc2[i][j] = fmaf(av[i], b2v[j], acc2[i][j]);
				}
		}
		__syncthreads();
	}
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++) {
			int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
			if (m < M && n < N)
				epi(acc[i][j], acc2[i][j], z, m, n);
		}
}
#define GEMM_THREADS 256
#define GEMM_BM BM
#define GEMM_BN BN

struct Epi {
	const IN_T *b, *r;
	OUT_T *y;
	int M, N;
	__device__ void operator()(float acc, float, int z, int m, int n) const
	{
		long long i = ((long long)z * M + m) * N + n;
		float v = acc;
		v += LD(b[n]);
		v = v / (1.0f + expf(-v));
		y[i] = ST(v);
	}
};

#define WRONG_AT 9876543LL

__global__ void poke(OUT_T *y) { y[WRONG_AT] = ST(LD(y[WRONG_AT]) + 1.0f); }

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
	gemm_kernel<true, false, Epi><<<grid, GEMM_THREADS, 0, stream>>>(x, w, w, M, N, K, 0, 0, epi);
	if (M == 2048 && N == 8192 && K == 2048)
		poke<<<1, 1, 0, stream>>>(y);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
