// sdpa_bf16_d128, CUDA solution: scaled dot-product attention, bf16, head dim 128.
//
// Flash attention on tensor cores (nvcuda::wmma, m16n16k16, bf16 operands
// with fp32 accumulators). One block of 4 warps per (batch, query head, tile
// of 64 queries); each warp owns 16 query rows. The query tile stays in
// shared memory; K and V tiles of 64 keys stream through shared memory. Per
// key tile a warp computes S = Q K^T (fp32), applies scale, the masks and an
// online softmax in fp32 (running max m and sum l per row, rescaling by
// exp(m_old - m_new)), rounds P = exp(S - m) in [0, 1] to bf16 and
// accumulates P V into an fp32 O held in shared memory (rescaled per tile).
// Tiles entirely above the causal diagonal or outside the window are
// skipped. At the end O / l is rounded to bf16. Scores never reach global
// memory, and every sum is an fp32 one.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <math.h>
#include <stdint.h>
#include "ka_kernel.h"

using namespace nvcuda;

typedef __nv_bfloat16 T;
#define HD 128
#define BM 64
#define BN 64
#define NWARP 4
#define KLD (HD + 8) // K, V, Q tiles: padded rows (elements)
#define SLD (BN + 4) // S staging (floats)
#define PLD (BN + 8) // P tile (elements)
#define OLD (HD + 4) // O accumulator (floats)

__device__ __forceinline__ float ldf(const __half v) { return __half2float(v); }
__device__ __forceinline__ float ldf(const __nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void stf(__half *p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void stf(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }

struct smem_layout {
	T q[BM * KLD];
	T k[BN * KLD];
	T v[BN * KLD];
	T p[NWARP][16 * PLD];
	float s[NWARP][16 * SLD];
	float o[NWARP][16 * OLD];
	float alpha[NWARP][16];
};

// q [B, Hq, Sq, HD]; k, v [B, Hkv, Skv, HD]; o like q. Hq = Hkv * G. Key j is
// visible to query i when (!causal or j <= i + Skv - Sq) and (window == 0 or
// j > i + Skv - Sq - window).
__global__ void __launch_bounds__(NWARP * 32)
flash_fwd(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
	  T *__restrict__ o, long long Hq, long long G, long long Sq, long long Skv, int causal,
	  long long window, float scale_log2)
{
	extern __shared__ __align__(128) unsigned char smem_raw[];
	smem_layout &sm = *reinterpret_cast<smem_layout *>(smem_raw);
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const long long bh = blockIdx.y, b = bh / Hq, hq = bh % Hq;
	const long long q0 = (long long)blockIdx.x * BM;
	const T *qb = q + (bh * Sq + q0) * HD;
	const T *kb = k + ((b * (Hq / G) + hq / G) * Skv) * HD;
	const T *vb = v + ((b * (Hq / G) + hq / G) * Skv) * HD;
	const long long off = Skv - Sq;

	// Query tile (zero rows past Sq), 16-byte chunks.
	for (int c = threadIdx.x; c < BM * HD / 8; c += NWARP * 32) {
		int r = c / (HD / 8), d = (c % (HD / 8)) * 8;
		uint4 val = make_uint4(0, 0, 0, 0);
		if (q0 + r < Sq)
			val = *reinterpret_cast<const uint4 *>(qb + (long long)r * HD + d);
		*reinterpret_cast<uint4 *>(&sm.q[r * KLD + d]) = val;
	}
	float *ow = sm.o[warp];
	for (int e = lane; e < 16 * OLD; e += 32)
		ow[e] = 0.f;
	// Row state: lane pair (2r, 2r+1) owns row r of the warp, half the columns each.
	const int row = lane >> 1, half = lane & 1;
	const long long qi = q0 + warp * 16 + row; // query index of this lane's row
	float m = -INFINITY, l = 0.f;

	long long kend = Skv, kbeg = 0;
	if (causal)
		kend = min(Skv, q0 + BM + off);
	if (window > 0)
		kbeg = max(0LL, q0 + off - window + 1) / BN * BN;
	for (long long n0 = kbeg; n0 < kend; n0 += BN) {
		__syncthreads(); // previous tile's K and V fully used
		for (int c = threadIdx.x; c < BN * HD / 8; c += NWARP * 32) {
			int r = c / (HD / 8), d = (c % (HD / 8)) * 8;
			uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
			if (n0 + r < Skv) {
				kv = *reinterpret_cast<const uint4 *>(kb + (n0 + r) * HD + d);
				vv = *reinterpret_cast<const uint4 *>(vb + (n0 + r) * HD + d);
			}
			*reinterpret_cast<uint4 *>(&sm.k[r * KLD + d]) = kv;
			*reinterpret_cast<uint4 *>(&sm.v[r * KLD + d]) = vv;
		}
		__syncthreads();
		// S = Q_w K^T: 16 x 64 per warp.
		float *sw = sm.s[warp];
#pragma unroll
		for (int nb = 0; nb < BN / 16; nb++) {
			wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
			wmma::fill_fragment(acc, 0.f);
#pragma unroll
			for (int kk = 0; kk < HD / 16; kk++) {
				wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
				wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
				wmma::load_matrix_sync(fa, &sm.q[(warp * 16) * KLD + kk * 16], KLD);
				wmma::load_matrix_sync(fb, &sm.k[(nb * 16) * KLD + kk * 16], KLD);
				wmma::mma_sync(acc, fa, fb, acc);
			}
			wmma::store_matrix_sync(sw + nb * 16, acc, SLD, wmma::mem_row_major);
		}
		__syncwarp();
		// Online softmax on this lane's 32 columns of its row.
		float tmax = -INFINITY;
		const long long lim_hi = causal ? qi + off : Skv - 1; // last visible key
		const long long lim_lo = window > 0 ? qi + off - window + 1 : 0;
#pragma unroll 8
		for (int c = half * 32; c < half * 32 + 32; c++) {
			long long j = n0 + c;
			float sv = sw[row * SLD + c] * scale_log2;
			if (j >= Skv || j > lim_hi || j < lim_lo)
				sv = -INFINITY;
			sw[row * SLD + c] = sv;
			tmax = fmaxf(tmax, sv);
		}
		tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
		float mn = fmaxf(m, tmax);
		float alpha = mn == -INFINITY ? 1.f : exp2f(m - mn);
		float ps = 0.f;
		T *pw = sm.p[warp];
#pragma unroll 8
		for (int c = half * 32; c < half * 32 + 32; c++) {
			float sv = sw[row * SLD + c];
			float pv = sv == -INFINITY ? 0.f : exp2f(sv - mn);
			stf(&pw[row * PLD + c], pv);
			ps += pv;
		}
		ps += __shfl_xor_sync(0xffffffffu, ps, 1);
		l = l * alpha + ps;
		m = mn;
		if (half == 0)
			sm.alpha[warp][row] = alpha;
		__syncwarp();
		for (int e = lane; e < 16 * HD; e += 32) {
			int r = e / HD, d = e % HD;
			ow[r * OLD + d] *= sm.alpha[warp][r];
		}
		__syncwarp();
		// O_w += P_w V.
#pragma unroll
		for (int db = 0; db < HD / 16; db++) {
			wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
			wmma::load_matrix_sync(acc, ow + db * 16, OLD, wmma::mem_row_major);
#pragma unroll
			for (int kk = 0; kk < BN / 16; kk++) {
				wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
				wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
				wmma::load_matrix_sync(fa, pw + kk * 16, PLD);
				wmma::load_matrix_sync(fb, &sm.v[(kk * 16) * KLD + db * 16], KLD);
				wmma::mma_sync(acc, fa, fb, acc);
			}
			wmma::store_matrix_sync(ow + db * 16, acc, OLD, wmma::mem_row_major);
		}
		__syncwarp();
	}
	if (qi < Sq) {
		float inv = l > 0.f ? 1.f / l : 0.f;
		T *orow = o + (bh * Sq + qi) * HD;
		for (int d = half * (HD / 2); d < (half + 1) * (HD / 2); d++)
			stf(&orow[d], ow[row * OLD + d] * inv);
	}
}

// Launch over q [B, Hq, Sq, HD], k/v [B, Hq/G, Skv, HD].
static int flash_launch(const T *q, const T *k, const T *v, T *o, long long B, long long Hq,
			long long G, long long Sq, long long Skv, int causal, long long window,
			cudaStream_t stream)
{
	size_t smem = sizeof(smem_layout);
	if (cudaFuncSetAttribute(flash_fwd, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) !=
	    cudaSuccess)
		return -1;
	dim3 grid((unsigned)((Sq + BM - 1) / BM), (unsigned)(B * Hq));
	float scale_log2 = 1.4426950408889634f / sqrtf((float)HD);
	flash_fwd<<<grid, NWARP * 32, smem, stream>>>(q, k, v, o, Hq, G, Sq, Skv, causal, window,
						     scale_log2);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	/* Task order: params B, H, S; inputs q, k, v; output o. */
	const int64_t *p = a->params;
	return flash_launch((const T *)a->inputs[0].ptr, (const T *)a->inputs[1].ptr,
			    (const T *)a->inputs[2].ptr, (T *)a->outputs[0].ptr, p[0], p[1], 1, p[2], p[2], 0,
			    0, stream);

}
