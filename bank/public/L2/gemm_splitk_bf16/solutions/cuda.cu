// gemm_splitk_bf16, CUDA solution: x @ w.T + b.
// Split-K on tensor cores (PTX mma.sync m16n8k16, bf16 operands, fp32 accumulators); no libraries.
//
// K = 131072 against M = N = 512: a grid over the 16 output tiles of
// 128 x 128 alone would leave 116 of the 132 SMs idle, so K is split too. One
// CTA computes one 128 x 128 tile over one slice of K and writes its fp32
// partial tile to scratch; a second kernel sums the slices in a fixed order
// (deterministic), adds the bias in fp32 and rounds once to bf16. The number of
// slices fills two CTAs per SM (16 x 16 = 256 CTAs on the H200's 264 slots).
// The CTAs of one slice are consecutive in the grid, so they run together and
// the slice of x and w they share is read from DRAM once and from L2 after.
//
// Operands reach shared memory by 16-byte cp.async (zero-filled outside the
// matrix) in a 4-stage pipeline, when K is a multiple of 8 and the pointers
// 16-byte aligned; otherwise (odd check shapes) by bounds-checked scalar
// loads through the same pipeline.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_pipeline.h>
#include <stdint.h>
#include "ka_kernel.h"

typedef __nv_bfloat16 bf16;

#define BM 128
#define BN 128
#define BK 32
#define LDS (BK + 8) // row stride in shared memory: 80 bytes, so ldmatrix's 8 rows fall on distinct banks
#define STAGES 4
#define THREADS 256
#define STAGE_ELEMS ((BM + BN) * LDS) // A rows, then B rows
#define SMEM_BYTES (STAGES * STAGE_ELEMS * (int)sizeof(bf16))
#define MIN_KCHUNK 256

// One stage: rows 0..BM-1 are x[m0 + r][k0 .. k0 + BK), rows BM..BM+BN-1 are
// w[n0 + r - BM][k0 .. k0 + BK); zero where the row or k is outside the
// matrix or past this CTA's slice (kend).
template <bool VEC>
__device__ __forceinline__ void load_stage(bf16 *st, const bf16 *__restrict__ x, const bf16 *__restrict__ w,
					   int M, int N, int K, int m0, int n0, int k0, int kend, int tid)
{
	if (VEC) {
		// (BM + BN) rows of BK / 8 chunks of 16 bytes: 4 chunks a thread;
		// the first two are rows of x, the last two rows of w.
#pragma unroll
		for (int i = 0; i < (BM + BN) * (BK / 8) / THREADS; i++) {
			int c = tid + i * THREADS, r = c / (BK / 8), kc = (c % (BK / 8)) * 8, k = k0 + kc;
			bool isa = r < BM;
			int row = isa ? m0 + r : n0 + r - BM;
			const bf16 *base = isa ? x : w;
			bool ok = row < (isa ? M : N) && k < kend;
			const bf16 *src = ok ? base + (long long)row * K + k : base;
			__pipeline_memcpy_async(st + r * LDS + kc, src, 16, ok ? 0 : 16);
		}
	} else {
#pragma unroll 4
		for (int i = 0; i < (BM + BN) * BK / THREADS; i++) {
			int e = tid + i * THREADS, r = e / BK, kk = e % BK, k = k0 + kk;
			bool isa = r < BM;
			int row = isa ? m0 + r : n0 + r - BM;
			const bf16 *base = isa ? x : w;
			bool ok = row < (isa ? M : N) && k < kend;
			st[r * LDS + kk] = ok ? base[(long long)row * K + k] : __float2bfloat16(0.0f);
		}
	}
}

// ldmatrix .x4: lane l gives the address of row l % 8 of 8 x 8 matrix l / 8;
// register i receives, of matrix i, row l / 4, elements 2 (l % 4) and + 1.
__device__ __forceinline__ void ldsm_x4(unsigned addr, unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3)
{
#ifdef KA_CUDA_EMU // the CPU emulation harness (docs/cuda-emu.md): the instruction's warp-level host form
	ka_emu::ldmatrix_x4(addr, r0, r1, r2, r3);
#else
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
		     : "r"(addr)
		     : "memory");
#endif
}

// d += a (16 x 16, row-major fragment) * b (16 x 8, column-major fragment),
// bf16 operands, fp32 accumulators (PTX mma.m16n8k16 fragment layouts).
__device__ __forceinline__ void mma_bf16(float *d, const unsigned *a, unsigned b0, unsigned b1)
{
#ifdef KA_CUDA_EMU // the CPU emulation harness (docs/cuda-emu.md): the instruction's warp-level host form
	ka_emu::mma_bf16_m16n8k16(d, a, b0, b1);
#else
	asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
	    "{%0, %1, %2, %3};\n"
	    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// Grid (tiles_n, tiles_m, slices): CTA (bx, by, s) computes
// part[s][m][n] = sum over k in slice s of x[m][k] * w[n][k] for its tile;
// part is slices x Mp x Np floats, Mp and Np M and N rounded up to the tile.
// 8 warps in 2 x 4, each 64 x 32 of the tile: 4 x 4 mma tiles of 16 x 8.
template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
splitk_kernel(const bf16 *__restrict__ x, const bf16 *__restrict__ w, float *__restrict__ part, int M, int N, int K,
	      int kchunk, int Mp, int Np)
{
	extern __shared__ __align__(128) unsigned char smem_raw[];
	bf16 *smem = (bf16 *)smem_raw;
	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, s = blockIdx.z;
	const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
	const int kbeg = s * kchunk, kend = min(K, kbeg + kchunk);
	const int nk = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;
	// This lane's ldmatrix row addresses (bytes, shared space) in stage 0 at
	// k = 0. A, for m block i: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7),
	// (rows 0-7, k 8-15), (rows 8-15, k 8-15) give the a0..a3 registers.
	// B (stored n-major, k contiguous), for n blocks 2j and 2j + 1:
	// (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
	// give b0, b1 of block 2j and b0, b1 of block 2j + 1.
	const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
	const unsigned a_off = (unsigned)(((wm + (lane & 15)) * LDS + (lane >> 4) * 8) * sizeof(bf16));
	const unsigned b_off =
		(unsigned)(((BM + wn + (lane & 7) + ((lane >> 4) << 3)) * LDS + ((lane >> 3) & 1) * 8) * sizeof(bf16));

	float acc[4][4][4];
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[i][j][e] = 0.0f;

	// Pipeline: tile t lives in stage t % STAGES. One commit group per tile
	// (empty past the last), so "all but the newest STAGES - 2 groups done"
	// means tile kt has landed.
#pragma unroll
	for (int t = 0; t < STAGES - 1; t++) {
		if (t < nk)
			load_stage<VEC>(smem + t * STAGE_ELEMS, x, w, M, N, K, m0, n0, kbeg + t * BK, kend, tid);
		__pipeline_commit();
	}
	for (int kt = 0; kt < nk; kt++) {
		__pipeline_wait_prior(STAGES - 2);
		// Tile kt is visible to all; every warp is done with tile kt - 1,
		// whose stage the load below refills.
		__syncthreads();
		int t = kt + STAGES - 1;
		if (t < nk)
			load_stage<VEC>(smem + (t % STAGES) * STAGE_ELEMS, x, w, M, N, K, m0, n0, kbeg + t * BK, kend,
					tid);
		__pipeline_commit();
		const unsigned st = sbase + (unsigned)((kt % STAGES) * STAGE_ELEMS * sizeof(bf16));
#pragma unroll
		for (int kk = 0; kk < BK; kk += 16) {
			unsigned fa[4][4], fb[4][2];
#pragma unroll
			for (int i = 0; i < 4; i++)
				ldsm_x4(st + a_off + (unsigned)((16 * i * LDS + kk) * sizeof(bf16)), fa[i][0], fa[i][1],
					fa[i][2], fa[i][3]);
#pragma unroll
			for (int j = 0; j < 2; j++)
				ldsm_x4(st + b_off + (unsigned)((16 * j * LDS + kk) * sizeof(bf16)), fb[2 * j][0],
					fb[2 * j][1], fb[2 * j + 1][0], fb[2 * j + 1][1]);
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++)
					mma_bf16(acc[i][j], fa[i], fb[j][0], fb[j][1]);
		}
	}
	__pipeline_wait_prior(0);
	// Accumulator layout: d0, d1 at (row lane / 4, columns 2 (lane % 4), + 1),
	// d2, d3 eight rows below.
	const int g = lane >> 2, c2 = (lane & 3) * 2;
	float *p = part + ((long long)s * Mp + m0 + wm + g) * Np + n0 + wn + c2;
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++) {
			float *q = p + (long long)16 * i * Np + 8 * j;
			*(float2 *)q = make_float2(acc[i][j][0], acc[i][j][1]);
			*(float2 *)(q + 8LL * Np) = make_float2(acc[i][j][2], acc[i][j][3]);
		}
}

// y[m][n] = bf16(sum over s of part[s][m][n] + b[n]), slices summed in order.
__global__ void __launch_bounds__(256)
reduce_kernel(const float *__restrict__ part, const bf16 *__restrict__ b, bf16 *__restrict__ y, int M, int N,
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
		y[i] = __float2bfloat16_rn(v + __bfloat162float(b[n]));
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params M, N, K; inputs x, w, b; output y.
	int M = (int)a->params[0];
	int N = (int)a->params[1];
	int K = (int)a->params[2];
	const bf16 *x = (const bf16 *)a->inputs[0].ptr;
	const bf16 *w = (const bf16 *)a->inputs[1].ptr;
	const bf16 *b = (const bf16 *)a->inputs[2].ptr;
	bf16 *y = (bf16 *)a->outputs[0].ptr;
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
	bool vec = K % 8 == 0 && (((uintptr_t)x | (uintptr_t)w) & 15) == 0;
	dim3 grid(tn, tm, slices);
	if (vec) {
		if (cudaFuncSetAttribute(splitk_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES) !=
		    cudaSuccess)
			return -1;
		splitk_kernel<true><<<grid, THREADS, SMEM_BYTES, stream>>>(x, w, part, M, N, K, (int)kchunk, Mp, Np);
	} else {
		if (cudaFuncSetAttribute(splitk_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
					 SMEM_BYTES) != cudaSuccess)
			return -1;
		splitk_kernel<false><<<grid, THREADS, SMEM_BYTES, stream>>>(x, w, part, M, N, K, (int)kchunk, Mp, Np);
	}
	long long total = (long long)M * N;
	int rblocks = (int)((total + 255) / 256 < 4 * sms ? (total + 255) / 256 : 4 * sms);
	reduce_kernel<<<rblocks, 256, 0, stream>>>(part, b, y, M, N, Mp, Np, slices);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
