// expect: wrong_answer (phase timing)
// L1/gelu_bias_scale, right in the first call of each loaded plan and wrong
// in every later one, told apart by a call counter in a __device__ variable
// (bumped by a one-thread kernel at the start of every replay): each shape
// is loaded once, and the benchmark shape's first call is its correctness
// call, every later one a warm-up or a timed call. From the second call on,
// rows with r % 16 == 5 are not computed (1/16 of the work saved): the timed
// calls' sampled check (256 random items and the edges) must catch it.
#include <cuda_runtime.h>
#include "ka_kernel.h"
__device__ unsigned long long calls;

__global__ void bump(void)
{
	calls++;
}

__global__ void k(long long R, long long C, const float *x, const float *s, const float *b,
		  float *y)
{
	long long n = R * C, i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	if (calls > 1 && (i / C) % 16 == 5) {
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
	bump<<<1, 1, 0, stream>>>();
	k<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(R, C, x, s, b, y);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
