// gelu_bias_scale, compiled baseline: torch.nn.functional.gelu(x * scale + bias)
// as torch.compile produces it: the whole chain fused into one pointwise
// kernel (one read of x, one write of y, scale and bias from cache), each
// thread doing 4 elements of a 1024-element block with coalesced accesses,
// the shape of Inductor's XBLOCK = 1024 Triton kernel.
// Trusted code: it runs natively in the runner, not through the recorder.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int THREADS = 256, PER_THREAD = 4, BLOCK = THREADS * PER_THREAD;

__global__ void fused_gelu_bias_scale(const float *__restrict__ x, const float *__restrict__ scale,
				      const float *__restrict__ bias, float *__restrict__ y,
				      long long n, long long C)
{
	long long base = (long long)blockIdx.x * BLOCK + threadIdx.x;
#pragma unroll
	for (int j = 0; j < PER_THREAD; j++) {
		long long i = base + (long long)j * THREADS;
		if (i < n) {
			long long c = i % C;
			float v = x[i] * scale[c] + bias[c];
			y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
		}
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], scale [C], bias [C]; output y.
	long long R = a->params[0], C = a->params[1], n = R * C;
	unsigned blocks = (unsigned)((n + BLOCK - 1) / BLOCK);
	fused_gelu_bias_scale<<<blocks, THREADS, 0, stream>>>(
		(const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr,
		(const float *)a->inputs[2].ptr, (float *)a->outputs[0].ptr, n, C);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
