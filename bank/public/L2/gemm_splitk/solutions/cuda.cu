// gemm_splitk, CUDA solution: x @ w.T + b.
// Split-K fp32 SIMT GEMM (fp32 FMA, no tf32, fp32 accumulation); no libraries.
//
// K = 131072 against M = N = 256: a grid over the 4 output tiles of 128 x 128
// alone would leave 128 of the 132 SMs idle, so K is split too. One CTA
// computes one 128 x 128 tile over one slice of K (each thread an 8 x 8 block)
// and writes its partial tile to scratch; a second kernel sums the slices in a
// fixed order (deterministic) and adds the bias. The number of slices fills two
// CTAs per SM (4 x 66 = 264 CTAs on the H200). The CTAs of one slice are
// consecutive in the grid, so the slice of x and w they share comes from L2
// after its first read.
//
// Operands go through registers into shared memory, transposed to k-major so
// the inner loop reads 4 consecutive rows or columns with one 16-byte load;
// the next tile is fetched while the current one is computed (two buffers).
// Global loads are 16 bytes wide when K is a multiple of 4 and the pointers
// 16-byte aligned, bounds-checked scalars otherwise (odd check shapes).
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

#define BM 128
#define BN 128
#define BK 16
#define LDT (BM + 4) // k-major row stride: 16-byte aligned, stores spread over banks
#define THREADS 256
#define MIN_KCHUNK 256
#define PER_THREAD (BM * BK / THREADS) // elements of each operand a thread fetches per tile: 8

// Fetch this thread's share of the tile at k0 of rows m0.. of x and n0.. of w
// (zero outside the matrix or past kend). VEC: chunk c = tid + 256 i (i < 2)
// is row c / 4, k 4 (c % 4) .. + 3, held in a[4 i .. 4 i + 3]; scalar: element
// e = tid + 256 i (i < 8) is row e / 16, k e % 16.
template <bool VEC>
__device__ __forceinline__ void fetch(float *a, float *b, const float *__restrict__ x, const float *__restrict__ w,
				      int M, int N, int K, int m0, int n0, int k0, int kend, int tid)
{
	if (VEC) {
#pragma unroll
		for (int i = 0; i < PER_THREAD / 4; i++) {
			int c = tid + i * THREADS, r = c >> 2, k = k0 + (c & 3) * 4;
			float4 va = make_float4(0.f, 0.f, 0.f, 0.f), vb = va;
			if (m0 + r < M && k < kend)
				va = *(const float4 *)(x + (long long)(m0 + r) * K + k);
			if (n0 + r < N && k < kend)
				vb = *(const float4 *)(w + (long long)(n0 + r) * K + k);
			a[4 * i] = va.x, a[4 * i + 1] = va.y, a[4 * i + 2] = va.z, a[4 * i + 3] = va.w;
			b[4 * i] = vb.x, b[4 * i + 1] = vb.y, b[4 * i + 2] = vb.z, b[4 * i + 3] = vb.w;
		}
	} else {
#pragma unroll
		for (int i = 0; i < PER_THREAD; i++) {
			int e = tid + i * THREADS, r = e / BK, k = k0 + e % BK;
			a[i] = (m0 + r < M && k < kend) ? x[(long long)(m0 + r) * K + k] : 0.0f;
			b[i] = (n0 + r < N && k < kend) ? w[(long long)(n0 + r) * K + k] : 0.0f;
		}
	}
}

// Store what fetch() got, transposed: sa[k][m], sb[k][n].
template <bool VEC>
__device__ __forceinline__ void put(float (*sa)[LDT], float (*sb)[LDT], const float *a, const float *b, int tid)
{
	if (VEC) {
#pragma unroll
		for (int i = 0; i < PER_THREAD / 4; i++) {
			int c = tid + i * THREADS, r = c >> 2, k = (c & 3) * 4;
#pragma unroll
			for (int j = 0; j < 4; j++) {
				sa[k + j][r] = a[4 * i + j];
				sb[k + j][r] = b[4 * i + j];
			}
		}
	} else {
#pragma unroll
		for (int i = 0; i < PER_THREAD; i++) {
			int e = tid + i * THREADS, r = e / BK, k = e % BK;
			sa[k][r] = a[i];
			sb[k][r] = b[i];
		}
	}
}

// Grid (tiles_n, tiles_m, slices): CTA (bx, by, s) computes
// part[s][m][n] = sum over k in slice s of x[m][k] * w[n][k] for its tile;
// part is slices x Mp x Np floats, Mp and Np M and N rounded up to the tile.
// Thread (ty, tx) of a 16 x 16 grid owns rows 4 ty + {0..3} and 64 + 4 ty +
// {0..3}, columns 4 tx + {0..3} and 64 + 4 tx + {0..3}.
template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
splitk_kernel(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ part, int M, int N, int K,
	      int kchunk, int Mp, int Np)
{
	__shared__ __align__(16) float sa[2][BK][LDT];
	__shared__ __align__(16) float sb[2][BK][LDT];
	const int tid = threadIdx.x, ty = tid >> 4, tx = tid & 15;
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, s = blockIdx.z;
	const int kbeg = s * kchunk, kend = min(K, kbeg + kchunk);
	const int nk = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;
	float acc[8][8];
#pragma unroll
	for (int i = 0; i < 8; i++)
#pragma unroll
		for (int j = 0; j < 8; j++)
			acc[i][j] = 0.0f;
	float ra[PER_THREAD], rb[PER_THREAD];
	if (nk > 0) {
		fetch<VEC>(ra, rb, x, w, M, N, K, m0, n0, kbeg, kend, tid);
		put<VEC>(sa[0], sb[0], ra, rb, tid);
	}
	__syncthreads();
	for (int kt = 0; kt < nk; kt++) {
		const int cur = kt & 1;
		// Buffer cur ^ 1 was last read in iteration kt - 1, which every
		// thread finished before the barrier that ended it.
		if (kt + 1 < nk)
			fetch<VEC>(ra, rb, x, w, M, N, K, m0, n0, kbeg + (kt + 1) * BK, kend, tid);
#pragma unroll
		for (int k = 0; k < BK; k++) {
			float av[8], bv[8];
			*(float4 *)&av[0] = *(const float4 *)&sa[cur][k][4 * ty];
			*(float4 *)&av[4] = *(const float4 *)&sa[cur][k][64 + 4 * ty];
			*(float4 *)&bv[0] = *(const float4 *)&sb[cur][k][4 * tx];
			*(float4 *)&bv[4] = *(const float4 *)&sb[cur][k][64 + 4 * tx];
#pragma unroll
			for (int i = 0; i < 8; i++)
#pragma unroll
				for (int j = 0; j < 8; j++)
					acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
		}
		if (kt + 1 < nk)
			put<VEC>(sa[cur ^ 1], sb[cur ^ 1], ra, rb, tid);
		__syncthreads();
	}
	float *p = part + ((long long)s * Mp + m0) * Np + n0;
#pragma unroll
	for (int i = 0; i < 8; i++) {
		int r = (i < 4 ? 0 : 64) + 4 * ty + (i & 3);
		float *q = p + (long long)r * Np;
		*(float4 *)(q + 4 * tx) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
		*(float4 *)(q + 64 + 4 * tx) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
	}
}

// y[m][n] = sum over s of part[s][m][n] + b[n], slices summed in order.
__global__ void __launch_bounds__(256)
reduce_kernel(const float *__restrict__ part, const float *__restrict__ b, float *__restrict__ y, int M, int N,
	      int Mp, int Np, int slices)
{
	long long total = (long long)M * N, plane = (long long)Mp * Np;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
	     i += (long long)gridDim.x * blockDim.x) {
		int m = (int)(i / N), n = (int)(i % N);
		const float *q = part + (long long)m * Np + n;
		float v = 0.0f;
		for (int s = 0; s < slices; s++)
			v += q[s * plane];
		y[i] = v + b[n];
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w, b; output y.
	int M = (int)a->params[0];
	int N = (int)a->params[1];
	int K = (int)a->params[2];
	const float *x = (const float *)a->inputs[0].ptr;
	const float *w = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	int dev = 0, sms = 0;
	if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
							    cudaSuccess || sms <= 0)
		sms = 132;
	int tm = (M + BM - 1) / BM, tn = (N + BN - 1) / BN, Mp = tm * BM, Np = tn * BN;
	// Slices: enough CTAs for two per SM, each slice a whole number of BK
	// steps and at least MIN_KCHUNK long.
	long long want = (2LL * sms) / ((long long)tm * tn);
	if (want < 1)
		want = 1;
	long long kchunk = (K + want - 1) / want;
	kchunk = (kchunk + BK - 1) / BK * BK;
	if (kchunk < MIN_KCHUNK)
		kchunk = MIN_KCHUNK;
	int slices = (int)((K + kchunk - 1) / kchunk);
	if (slices > 65535)
		return -1;
	float *part = (float *)ka_workspace((size_t)slices * Mp * Np * sizeof(float));
	if (!part)
		return -1;
	bool vec = K % 4 == 0 && (((uintptr_t)x | (uintptr_t)w) & 15) == 0;
	dim3 grid(tn, tm, slices);
	if (vec)
		splitk_kernel<true><<<grid, THREADS, 0, stream>>>(x, w, part, M, N, K, (int)kchunk, Mp, Np);
	else
		splitk_kernel<false><<<grid, THREADS, 0, stream>>>(x, w, part, M, N, K, (int)kchunk, Mp, Np);
	long long total = (long long)M * N;
	int rblocks = (int)((total + 255) / 256 < 4 * sms ? (total + 255) / 256 : 4 * sms);
	reduce_kernel<<<rblocks, 256, 0, stream>>>(part, b, y, M, N, Mp, Np, slices);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
