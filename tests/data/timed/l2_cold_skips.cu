// expect: wrong_answer (phase timing)
// L1/gelu_bias_scale, right in every untimed call and wrong in every timed
// one, told apart by the L2 cache: the runner hashes every input just before
// the replay (bias, the last input, is then in L2) and, before a timed call
// only, flushes L2 with a large write (bias is then in DRAM). A one-thread
// probe kernel, alone on the device at the start of the replay, loads up to
// eight lines of bias twice each, uncached in L1 (__ldcg), and times each
// load with clock64 (the second clock read waits for the load: it is
// predicated on the loaded value). Measured on the H200 (2026-12-02): the
// fastest first load of a line took about 284 cycles after the hash (an L2
// hit; the slowest second load, a hit too, about 321) and about 530 after
// the flush (DRAM; second loads about 326). Cold, when the fastest first
// load took over 1.25 times the slowest second load: the main kernel's odd
// blocks then write zeros without computing (half the work saved). The
// timed calls' checks must catch it.
#include <cuda_runtime.h>
#include "ka_kernel.h"
__device__ int cold;
__device__ unsigned sink; /* the loaded values are used: ptxas keeps the loads */

/* The latency of one load of p[*z] (*z is 0, but only at run time: it is
 * the loaded value and zero, a kernel argument that is 0, so each load waits
 * for the one before). ptxas optimises the PTX of volatile asm like any
 * other: a constant 0 would be folded and the loads, whose values only
 * feed later addresses, dropped; sink keeps the last value in use. */
__device__ long long load_cycles(const unsigned *p, unsigned *z, unsigned zero)
{
	unsigned v;
	long long t0, t1;
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) : "r"(*z) : "memory");
	asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p + *z) : "memory");
	asm volatile("and.b32 %0, %1, %2;" : "=r"(*z) : "r"(v), "r"(zero));
	/* The second clock read is predicated on the loaded value, so it
	 * cannot be issued before the load is back. */
	asm volatile("{ .reg .pred q; setp.ne.u32 q, %1, 0xffffffff; @q mov.u64 %0, %%clock64;\n"
		     "@!q mov.u64 %0, 0; }"
		     : "=l"(t1)
		     : "r"(*z)
		     : "memory");
	return t1 - t0;
}

__global__ void probe(const float *b, long long C, unsigned zero)
{
	const unsigned *w = (const unsigned *)b;
	long long lines = (C * 4 + 127) / 128;
	int n = lines < 8 ? (int)lines : 8;
	long long first_min = -1, second_max = 0;
	unsigned z = 0;
	for (int k = 0; k < n; k++) {
		const unsigned *p = w + (long long)k * (lines / n) * 32;
		long long a = load_cycles(p, &z, zero), s = load_cycles(p, &z, zero);
		if (first_min < 0 || a < first_min)
			first_min = a;
		if (s > second_max)
			second_max = s;
	}
	cold = 4 * first_min > 5 * second_max;
	sink = z;
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
	probe<<<1, 1, 0, stream>>>(b, C, (unsigned)(R >> 62)); /* 0, unknown to ptxas */
	k<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(R, C, x, s, b, y);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
