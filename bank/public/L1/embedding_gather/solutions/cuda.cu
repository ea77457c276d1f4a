// embedding_gather, CUDA solution: F.embedding(idx, weight).
//
// One warp per output row (8 rows per 256-thread block, grid-stride over
// the rows): lane 0's load of idx[n] is broadcast, then the warp copies the
// D floats of weight's row with float4 loads and streaming float4 stores
// (when D % 4 == 0 and both pointers are 16-byte aligned; scalar otherwise),
// four vectors per lane in flight. weight's rows go through the cache
// (__ldg), since an index can repeat; y is written once and not re-read.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int ROWS = 8;

template <bool VEC>
__global__ void __launch_bounds__(32 * ROWS)
gather_kernel(const long long *__restrict__ idx, const float *__restrict__ w, float *__restrict__ y, long long N,
	      long long D)
{
	const int lane = threadIdx.x;
	for (long long n = (long long)blockIdx.x * ROWS + threadIdx.y; n < N; n += (long long)gridDim.x * ROWS) {
		long long r = __shfl_sync(0xffffffffu, lane == 0 ? __ldg(idx + n) : 0ll, 0);
		const float *src = w + r * D;
		float *dst = y + n * D;
		if (VEC) {
			const float4 *s4 = reinterpret_cast<const float4 *>(src);
			float4 *d4 = reinterpret_cast<float4 *>(dst);
			long long q = lane, nq = D / 4;
			for (; q + 96 < nq; q += 128) {
				float4 v0 = __ldg(s4 + q), v1 = __ldg(s4 + q + 32);
				float4 v2 = __ldg(s4 + q + 64), v3 = __ldg(s4 + q + 96);
				__stcs(d4 + q, v0);
				__stcs(d4 + q + 32, v1);
				__stcs(d4 + q + 64, v2);
				__stcs(d4 + q + 96, v3);
			}
			for (; q < nq; q += 32)
				__stcs(d4 + q, __ldg(s4 + q));
		} else {
			for (long long d = lane; d < D; d += 32)
				__stcs(dst + d, __ldg(src + d));
		}
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, V, D; inputs idx [N] int64, weight [V, D] fp32; output y [N, D] fp32.
	long long N = a->params[0], D = a->params[2];
	const long long *idx = (const long long *)a->inputs[0].ptr;
	const float *w = (const float *)a->inputs[1].ptr;
	float *y = (float *)a->outputs[0].ptr;
	long long blocks = (N + ROWS - 1) / ROWS;
	unsigned grid = (unsigned)(blocks > 132 * 64 ? 132 * 64 : blocks);
	dim3 block(32, ROWS);
	if (D % 4 == 0 && ((uintptr_t)w & 15) == 0 && ((uintptr_t)y & 15) == 0)
		gather_kernel<true><<<grid, block, 0, stream>>>(idx, w, y, N, D);
	else
		gather_kernel<false><<<grid, block, 0, stream>>>(idx, w, y, N, D);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
