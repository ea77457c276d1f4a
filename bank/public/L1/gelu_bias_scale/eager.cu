// gelu_bias_scale, eager baseline: torch.nn.functional.gelu(x * scale + bias)
// as PyTorch eager runs it: one kernel per op, each intermediate a full
// [R, C] tensor in memory (scratch from ka_workspace):
//   t1 = x * scale    (broadcast multiply)
//   t2 = t1 + bias    (broadcast add)
//   y  = gelu(t2)     (exact erf GELU, in fp32 as PyTorch computes it)
// Trusted code: it runs natively in the runner, not through the recorder.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int THREADS = 256;

__global__ void mul_bcast(const float *__restrict__ a, const float *__restrict__ v,
			  float *__restrict__ out, long long n, long long C)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = a[i] * v[i % C];
}

__global__ void add_bcast(const float *__restrict__ a, const float *__restrict__ v,
			  float *__restrict__ out, long long n, long long C)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = a[i] + v[i % C];
}

__global__ void gelu(const float *__restrict__ a, float *__restrict__ out, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = a[i];
		out[i] = v * 0.5f * (1.0f + erff(v * 0.70710678118654752f));
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C], scale [C], bias [C]; output y.
	long long R = a->params[0], C = a->params[1], n = R * C;
	const float *x = (const float *)a->inputs[0].ptr;
	const float *scale = (const float *)a->inputs[1].ptr;
	const float *bias = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	// Two intermediates, the second 256-byte aligned like any allocation.
	size_t tbytes = ((size_t)n * sizeof(float) + 255) / 256 * 256;
	char *ws = (char *)ka_workspace(2 * tbytes);
	if (!ws)
		return -1;
	float *t1 = (float *)ws, *t2 = (float *)(ws + tbytes);
	unsigned blocks = (unsigned)((n + THREADS - 1) / THREADS);
	mul_bcast<<<blocks, THREADS, 0, stream>>>(x, scale, t1, n, C);
	add_bcast<<<blocks, THREADS, 0, stream>>>(t1, bias, t2, n, C);
	gelu<<<blocks, THREADS, 0, stream>>>(t2, y, n);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
