// gemv_bias_tanh, CUDA solution: y = tanh(W @ x + b), W [N, K], x [K].
// Memory-bound: W is read once. A warp per row: the 32 lanes stride over K
// (coalesced 128-byte loads; float4 loads when K % 4 == 0 and W, x are
// 16-byte aligned), fp32 FMAs, a shuffle reduction, then bias and tanh.
// No libraries, no tf32.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

#define WARPS 8

template <bool VEC>
__global__ void __launch_bounds__(WARPS * 32)
gemv_bias_tanh(const float *__restrict__ W, const float *__restrict__ x, const float *__restrict__ b,
	       float *__restrict__ y, int N, int K)
{
	int row = blockIdx.x * WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
	if (row >= N)
		return;
	const float *w = W + (long long)row * K;
	float s = 0.0f;
	if (VEC) {
		const float4 *w4 = (const float4 *)w, *x4 = (const float4 *)x;
		for (int k = lane; k < K / 4; k += 32) {
			float4 a = __ldg(w4 + k), c = __ldg(x4 + k);
			s = fmaf(a.x, c.x, s);
			s = fmaf(a.y, c.y, s);
			s = fmaf(a.z, c.z, s);
			s = fmaf(a.w, c.w, s);
		}
	} else {
		for (int k = lane; k < K; k += 32)
			s = fmaf(__ldg(w + k), __ldg(x + k), s);
	}
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if (lane == 0)
		y[row] = tanhf(s + b[row]);
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, K; inputs w [N, K], x [K], b [N]; output y [N].
	int N = (int)a->params[0], K = (int)a->params[1];
	const float *w = (const float *)a->inputs[0].ptr;
	const float *x = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	bool vec = K % 4 == 0 && (((uintptr_t)w | (uintptr_t)x) & 15) == 0;
	unsigned blocks = (unsigned)((N + WARPS - 1) / WARPS);
	if (vec)
		gemv_bias_tanh<true><<<blocks, WARPS * 32, 0, stream>>>(w, x, b, y, N, K);
	else
		gemv_bias_tanh<false><<<blocks, WARPS * 32, 0, stream>>>(w, x, b, y, N, K);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
