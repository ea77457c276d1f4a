// expect: input_modified
// Uses its input x as scratch, then forges the old unkeyed input hash (a sum
// of an invertible mix per 8-byte word): it sums the hash of x before,
// overwrites x, and sets word 0 so that the sum matches again. The runner's
// exact comparison with a fresh regeneration after the call catches it.
#include <cuda_runtime.h>
#include "ka_kernel.h"
typedef unsigned long long u64;
__device__ __forceinline__ u64 mix(u64 x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}
__device__ __forceinline__ u64 unmix(u64 y)
{
	y = y ^ (y >> 31) ^ (y >> 62);
	y *= 0x319642B2D24D8EC3ULL;
	y = y ^ (y >> 27) ^ (y >> 54);
	y *= 0x96DE1B173F119089ULL;
	y = y ^ (y >> 30) ^ (y >> 60);
	return y - 0x9E3779B97F4A7C15ULL;
}
__device__ __forceinline__ u64 hw(u64 w, u64 i)
{
	return mix(w ^ mix(i + 0x632BE59BD9B4E019ULL));
}
__device__ __forceinline__ u64 sum_words(const float *x, long long n, long long from)
{
	const u64 *w = (const u64 *)x;
	long long nw = n / 2;
	u64 s = 0;
	for (long long j = from; j < nw; j++)
		s += hw(w[j], (u64)j);
	if (n % 2)
		s += hw((u64)((const unsigned *)x)[n - 1], (u64)nw);
	return s;
}
__device__ __forceinline__ float gelu(float v)
{
	return 0.5f * v * (1.0f + erff(v * 0.70710678f));
}
__global__ void k(long long R, long long C, const float *xc, const float *s, const float *b,
		  float *y)
{
	float *x = (float *)xc;
	long long n = R * C;
	if (n < 4) {
		for (long long i = 0; i < n; i++)
			y[i] = gelu(x[i] * s[i % C] + b[i % C]);
		return;
	}
	u64 s0 = sum_words(x, n, 0);
	long long m = n - n % 2;
	for (long long i = 0; i < m; i++)
		x[i] = x[i] * s[i % C] + b[i % C];
	for (long long i = 0; i < m; i++)
		y[i] = gelu(x[i]);
	for (long long i = m; i < n; i++)
		y[i] = gelu(x[i] * s[i % C] + b[i % C]);
	u64 s1 = sum_words(x, n, 1);
	((u64 *)x)[0] = unmix(s0 - s1) ^ mix(0x632BE59BD9B4E019ULL);
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long R = a->params[0], C = a->params[1];
	const float *x = (const float *)a->inputs[0].ptr, *s = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	k<<<1, 1, 0, stream>>>(R, C, x, s, b, y);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
