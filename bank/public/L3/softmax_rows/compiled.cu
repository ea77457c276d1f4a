// softmax_rows, compiled baseline: torch.softmax(x, dim=-1) as torch.compile
// produces it for long rows: one fused kernel, one block per row, with an
// online softmax (Inductor's looped reduction): pass 1 reads the row once,
// keeping a running max m and a running sum s of exp(x - m) that is
// rescaled by exp(m_old - m_new) whenever the max grows; the per-thread
// (m, s) pairs are merged across the block the same way; pass 2 reads the
// row again (mostly from L2) and writes exp(x - m) / s.
// Trusted code: it runs natively in the runner, not through the recorder.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int THREADS = 256;

// Merge (m, s) with (m2, s2): the pair for the union of both sets.
__device__ __forceinline__ void online_merge(float &m, float &s, float m2, float s2)
{
	float mn = fmaxf(m, m2);
	if (mn == -INFINITY)
		return; // both empty
	s = s * expf(m - mn) + s2 * expf(m2 - mn);
	m = mn;
}

__global__ void __launch_bounds__(THREADS)
softmax_online(const float *__restrict__ x, float *__restrict__ y, long long C)
{
	__shared__ float red_m[THREADS / 32], red_s[THREADS / 32];
	__shared__ float row_m, row_s;
	const float *xr = x + (long long)blockIdx.x * C;
	float *yr = y + (long long)blockIdx.x * C;
	float m = -INFINITY, s = 0.f;
	for (long long c = threadIdx.x; c < C; c += THREADS)
		online_merge(m, s, xr[c], 1.f);
	for (int o = 16; o > 0; o >>= 1) {
		float m2 = __shfl_xor_sync(0xffffffffu, m, o);
		float s2 = __shfl_xor_sync(0xffffffffu, s, o);
		online_merge(m, s, m2, s2);
	}
	int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	if (lane == 0) {
		red_m[warp] = m;
		red_s[warp] = s;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int w = 1; w < THREADS / 32; w++)
			online_merge(red_m[0], red_s[0], red_m[w], red_s[w]);
		row_m = red_m[0];
		row_s = red_s[0];
	}
	__syncthreads();
	m = row_m;
	float inv = 1.f / row_s;
	for (long long c = threadIdx.x; c < C; c += THREADS)
		yr[c] = expf(xr[c] - m) * inv;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C]; output y [R, C].
	long long R = a->params[0], C = a->params[1];
	softmax_online<<<(unsigned)R, THREADS, 0, stream>>>((const float *)a->inputs[0].ptr,
							    (float *)a->outputs[0].ptr, C);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
