// L1/gelu_bias_scale in two kernels chained by programmatic dependent launch,
// for tests/gpu/pdl.sh. `pre` writes v = x * scale + bias into y and lets its
// dependent start at once (cudaTriggerProgrammaticLaunchCompletion); `post`
// waits for it (cudaGridDependencySynchronize), then applies the GELU in
// place. Each kernel burns REPS rounds of erff per element that leave the
// value as it was (v + (h - h) with h finite), so both carry a share of the
// time: about 40% in `pre`, 60% in `post`, most of it after the wait. Both
// launches carry the attribute (the runner drops it on the plan's first).
// pdl.sh grades three variants made by editing the two switches below:
//   PDL 1, WAIT 1: this file (must grade ok);
//   PDL 0, WAIT 1: the same launches without the attribute (the reference
//                  time: with PDL the time must be at least 0.8 x of it);
//   PDL 1, WAIT 0: `post` reads y without waiting (a race: wrong or, by
//                  luck, correct; never a harness failure).
#include <cuda_runtime.h>
#include "ka_kernel.h"

#define PDL 1
#define WAIT 1

static const int THREADS = 256, REPS_PRE = 16, REPS_POST = 24;

// reps rounds of erff on a dependent chain; returns v unchanged (v finite).
__device__ float burn(float v, int reps)
{
	for (int k = 0; k < reps; k++) {
		float h = erff(v);
		v = v + (h - h);
	}
	return v;
}

__global__ void pre(const float *x, const float *s, const float *b, float *y, long long n,
		    long long C, int reps)
{
	cudaTriggerProgrammaticLaunchCompletion();
	long long i = blockIdx.x * (long long)THREADS + threadIdx.x;
	if (i < n)
		y[i] = burn(x[i] * s[i % C] + b[i % C], reps);
}

__global__ void post(float *y, long long n, int reps)
{
	long long i = blockIdx.x * (long long)THREADS + threadIdx.x;
#if WAIT
	cudaGridDependencySynchronize();
#endif
	if (i < n) {
		float v = burn(y[i], reps);
		y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long R = a->params[0], C = a->params[1], n = R * C;
	const float *x = (const float *)a->inputs[0].ptr, *s = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attr[0].val.programmaticStreamSerializationAllowed = PDL;
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = dim3((unsigned)((n + THREADS - 1) / THREADS));
	cfg.blockDim = dim3(THREADS);
	cfg.stream = stream;
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	if (cudaLaunchKernelEx(&cfg, pre, x, s, b, y, n, C, REPS_PRE) != cudaSuccess)
		return 1;
	return cudaLaunchKernelEx(&cfg, post, y, n, REPS_POST) == cudaSuccess ? 0 : 2;
}
