// expect: wrong_answer (phase timing)
// L1/gelu_bias_scale, right in every untimed call and wrong in every timed
// one, told apart by the L2 cache: the runner hashes every input just before
// the replay (bias, the last input, is then in L2) and, before a timed call
// only, flushes L2 with a large write (bias is then in DRAM). A one-thread
// probe kernel, alone on the device at the start of the replay, loads up to
// eight lines of bias twice each, uncached in L1 (__ldcg), and times each
// load with clock64: the second load of a line is an L2 hit from the same
// partition as the first, so the first load is compared with it rather
// than with a fixed latency (an L2 hit in the far partition is slower than
// one in the near). Cold, when every first load took over twice as long as
// the slowest second load and over 600 cycles: the main kernel's odd blocks
// then write zeros without computing (half the work saved). The timed
// calls' checks must catch it.
#include <cuda_runtime.h>
#include "ka_kernel.h"
__device__ int cold;

/* The latency of one load of p[*z] (*z is 0, but only at run time: it is
 * made from the loaded value, so each load waits for the one before). The
 * loads, the clock reads and the use of the value are volatile asm, kept in
 * this order and never merged. */
__device__ long long load_cycles(const unsigned *p, unsigned *z)
{
	unsigned v;
	long long t0 = clock64();
	asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p + *z) : "memory");
	asm volatile("and.b32 %0, %1, 0;" : "=r"(*z) : "r"(v));
	long long t1 = clock64();
	return t1 - t0;
}

__global__ void probe(const float *b, long long C)
{
	const unsigned *w = (const unsigned *)b;
	long long lines = (C * 4 + 127) / 128;
	int n = lines < 8 ? (int)lines : 8;
	long long first_min = -1, second_max = 0;
	unsigned z = 0;
	for (int k = 0; k < n; k++) {
		const unsigned *p = w + (long long)k * (lines / n) * 32;
		long long a = load_cycles(p, &z), s = load_cycles(p, &z);
		if (first_min < 0 || a < first_min)
			first_min = a;
		if (s > second_max)
			second_max = s;
	}
	cold = first_min > 2 * second_max && first_min > 600;
}

__global__ void k(long long R, long long C, const float *x, const float *s, const float *b,
		  float *y)
{
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
	probe<<<1, 1, 0, stream>>>(b, C);
	k<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(R, C, x, s, b, y);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
