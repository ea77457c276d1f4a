// expect: wrong_answer (phase timing)
// L1/gelu_bias_scale, right in the first two calls at each shape and wrong in
// every later one, told apart by a call counter per shape (a table keyed by
// C, the shapes' C differ, in __device__ variables) that a one-thread kernel
// bumps at the start of every replay. The correctness phase calls each check
// shape twice and the benchmark shape once, so every untimed call is right;
// at the benchmark shape the first warm-up call is right and every later
// warm-up or timed call is wrong. From the third call on, rows with
// r % 16 == 5 are not computed (1/16 of the work saved): the timed calls'
// checks must catch it.
#include <cuda_runtime.h>
#include "ka_kernel.h"
#define SLOTS 16
__device__ long long seen_c[SLOTS];
__device__ unsigned counts[SLOTS], now;

/* One thread: find (or add) C in the table, count this call, publish it. */
__global__ void bump(long long C)
{
	unsigned h = (unsigned)(C % SLOTS);
	for (int k = 0; k < SLOTS; k++, h = (h + 1) % SLOTS) {
		if (counts[h] == 0)
			seen_c[h] = C;
		if (seen_c[h] == C) {
			now = ++counts[h];
			return;
		}
	}
	now = 0; /* table full: compute honestly */
}

__global__ void k(long long R, long long C, const float *x, const float *s, const float *b,
		  float *y)
{
	long long n = R * C, i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	if (now > 2 && (i / C) % 16 == 5) {
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
	bump<<<1, 1, 0, stream>>>(C);
	k<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(R, C, x, s, b, y);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
