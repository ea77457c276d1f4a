// decode_f16_d128, CUDA solution: single-query decode attention over a long KV cache, fp16, head dim 128.
//
// Split-KV decode attention (flash-decoding). The KV cache is cut into
// chunks; grid = (batch x kv head, chunk). A block of 4 warps walks its chunk,
// each warp taking every 4th key, 4 keys per step with all loads issued
// before the math (enough bytes in flight to stream K and V at full
// bandwidth). A lane holds HD/32 consecutive dimensions: the G query heads
// that share this kv head stay in registers; the score is a warp-shuffle dot
// product; each warp keeps an online softmax (max m, sum l, unnormalised o)
// per query head in fp32. The 4 warps merge in shared memory and the block
// writes its partial (m, l, o) to workspace; a second kernel merges the
// chunks: o = sum_c exp(m_c - M) o_c / sum_c exp(m_c - M) l_c. Every sum is fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include "ka_kernel.h"

typedef __half T;
#define HD 128
#define GMAX 1 // the largest group size this build supports
#define NW 4
#define UNROLL 4
#define PER (HD / 32)

__device__ __forceinline__ float ldf(const __half v) { return __half2float(v); }
__device__ __forceinline__ float ldf(const __nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void stf(__half *p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void stf(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }

template <int NG>
__global__ void __launch_bounds__(NW * 32)
decode_split(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
	     float *__restrict__ part, long long L, long long chunk, float scale_log2)
{
	__shared__ float sm_o[NW][NG][HD];
	__shared__ float sm_ml[NW][NG][2];
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const long long bk = blockIdx.x; // b * Hkv + kv head: query heads bk*NG .. +NG
	const long long c0 = (long long)blockIdx.y * chunk, c1 = min(L, c0 + chunk);
	const T *kb = k + bk * L * HD + lane * PER;
	const T *vb = v + bk * L * HD + lane * PER;
	float qr[NG][PER], o[NG][PER], m[NG], l[NG];
#pragma unroll
	for (int g = 0; g < NG; g++) {
		const T *qg = q + (bk * NG + g) * HD + lane * PER;
#pragma unroll
		for (int d = 0; d < PER; d++) {
			qr[g][d] = ldf(qg[d]) * scale_log2;
			o[g][d] = 0.f;
		}
		m[g] = -INFINITY;
		l[g] = 0.f;
	}
	for (long long j0 = c0 + warp; j0 < c1; j0 += NW * UNROLL) {
		float kf[UNROLL][PER], vf[UNROLL][PER];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			long long j = j0 + (long long)u * NW;
#pragma unroll
			for (int d = 0; d < PER; d++) {
				kf[u][d] = j < c1 ? ldf(kb[j * HD + d]) : 0.f;
				vf[u][d] = j < c1 ? ldf(vb[j * HD + d]) : 0.f;
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			if (j0 + (long long)u * NW >= c1)
				break;
#pragma unroll
			for (int g = 0; g < NG; g++) {
				float s = 0.f;
#pragma unroll
				for (int d = 0; d < PER; d++)
					s += qr[g][d] * kf[u][d];
#pragma unroll
				for (int x = 16; x > 0; x >>= 1)
					s += __shfl_xor_sync(0xffffffffu, s, x);
				float mn = fmaxf(m[g], s);
				float a = exp2f(m[g] - mn), p = exp2f(s - mn);
				l[g] = l[g] * a + p;
#pragma unroll
				for (int d = 0; d < PER; d++)
					o[g][d] = o[g][d] * a + p * vf[u][d];
				m[g] = mn;
			}
		}
	}
#pragma unroll
	for (int g = 0; g < NG; g++) {
#pragma unroll
		for (int d = 0; d < PER; d++)
			sm_o[warp][g][lane * PER + d] = o[g][d];
		if (lane == 0) {
			sm_ml[warp][g][0] = m[g];
			sm_ml[warp][g][1] = l[g];
		}
	}
	__syncthreads();
	// Merge the warps: thread t handles (g, d) pairs.
	float *pb = part + ((long long)blockIdx.x * gridDim.y + blockIdx.y) * NG * (HD + 2);
	for (int e = threadIdx.x; e < NG * HD; e += NW * 32) {
		int g = e / HD, d = e % HD;
		float M = -INFINITY;
		for (int w = 0; w < NW; w++)
			M = fmaxf(M, sm_ml[w][g][0]);
		float os = 0.f, ls = 0.f;
		for (int w = 0; w < NW; w++) {
			float f = sm_ml[w][g][0] == -INFINITY ? 0.f : exp2f(sm_ml[w][g][0] - M);
			os += f * sm_o[w][g][d];
			ls += f * sm_ml[w][g][1];
		}
		pb[g * (HD + 2) + 2 + d] = os;
		if (d == 0) {
			pb[g * (HD + 2)] = M;
			pb[g * (HD + 2) + 1] = ls;
		}
	}
}

// out row (bk, g): merge nsplit partials. One block of HD threads per query row.
__global__ void decode_merge(const float *__restrict__ part, T *__restrict__ out, int nsplit, int NG)
{
	const long long row = blockIdx.x, bk = row / NG, g = row % NG;
	const int d = threadIdx.x;
	float M = -INFINITY;
	for (int c = 0; c < nsplit; c++)
		M = fmaxf(M, part[((bk * nsplit + c) * NG + g) * (HD + 2)]);
	float os = 0.f, ls = 0.f;
	for (int c = 0; c < nsplit; c++) {
		const float *pc = part + ((bk * nsplit + c) * NG + g) * (HD + 2);
		float f = pc[0] == -INFINITY ? 0.f : exp2f(pc[0] - M);
		os += f * pc[2 + d];
		ls += f * pc[1];
	}
	stf(&out[row * HD + d], os / ls);
}

// q [BK * G, HD] (query heads grouped by kv head), k/v [BK, L, HD], out like q.
static int decode_launch(const T *q, const T *k, const T *v, T *out, long long BK, long long G,
			 long long L, cudaStream_t stream)
{
	long long want = (132LL * 8 + BK - 1) / BK;
	long long nsplit = min((L + 255) / 256, max(1LL, want));
	long long chunk = (L + nsplit - 1) / nsplit;
	nsplit = (L + chunk - 1) / chunk;
	float *part = (float *)ka_workspace((size_t)(BK * nsplit * G * (HD + 2)) * sizeof(float));
	if (!part)
		return -1;
	dim3 grid((unsigned)BK, (unsigned)nsplit);
	float sl2 = 1.4426950408889634f / sqrtf((float)HD);
	switch (G) {
	case 1: decode_split<1><<<grid, NW * 32, 0, stream>>>(q, k, v, part, L, chunk, sl2); break;
	default: return -1;
	}
	decode_merge<<<(unsigned)(BK * G), HD, 0, stream>>>(part, out, (int)nsplit, (int)G);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	/* Task order: params B, H, L; inputs q, k, v; output o. */
	const int64_t *p = a->params;
	return decode_launch((const T *)a->inputs[0].ptr, (const T *)a->inputs[1].ptr,
			     (const T *)a->inputs[2].ptr, (T *)a->outputs[0].ptr, p[0] * p[1], 1, p[2],
			     stream);

}
