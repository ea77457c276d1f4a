// expect: wrong_answer (phase timing)
// L1/gelu_bias_scale, right in every untimed call and wrong in every timed
// one, told apart by the L2 cache: the runner flushes it before a timed call
// only, so bias (the last input the runner generates, 4 bytes a column) is
// an L2 hit in an untimed call and a DRAM miss after the flush. Thread 0 of
// each block times one uncached load of bias[0] with clock64; over 450
// cycles (the H200's L2 hit is about 250), the block writes its outputs
// without computing them (half the work saved). The timed calls' sampled
// check must catch it.
#include <cuda_runtime.h>
#include "ka_kernel.h"
__global__ void k(long long R, long long C, const float *x, const float *s, const float *b,
		  float *y)
{
	__shared__ int cold;
	if (threadIdx.x == 0) {
		long long t0 = clock64();
		float v = __ldcg(b);
		long long t1 = clock64();
		cold = (t1 - t0 > 450) && v == v;
	}
	__syncthreads();
	long long n = R * C, i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	if (cold && (blockIdx.x & 1)) {
		y[i] = 0.0f;
		return;
	}
	float v = x[i] * s[i % C] + b[i % C];
	y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long R = a->params[0], C = a->params[1], n = R * C;
	const float *x = (const float *)a->inputs[0].ptr, *s = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	k<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(R, C, x, s, b, y);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
