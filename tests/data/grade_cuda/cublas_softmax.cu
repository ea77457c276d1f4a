// expect: ok
// gemm_bias_softmax with cuBLAS for the GEMM (the task's policy lists cublas)
// and one fused kernel for the bias and the row softmax: Y = softmax(X W^T + b).
// Row-major Y [M,N] is column-major Y^T = W X^T: cublasSgemm with A = W (K x N
// column-major, transposed), B = X (K x M column-major), m = N, n = M, k = K.
// FP32 math (the default math mode, no TF32), set explicitly.
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "ka_kernel.h"

#define THREADS 256

__device__ float block_reduce(float v, bool is_max, float *red)
{
	for (int o = 16; o > 0; o >>= 1) {
		float u = __shfl_xor_sync(0xffffffffu, v, o);
		v = is_max ? fmaxf(v, u) : v + u;
	}
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	if (lane == 0)
		red[warp] = v;
	__syncthreads();
	if (warp == 0) {
		v = lane < THREADS / 32 ? red[lane] : (is_max ? -INFINITY : 0.0f);
		for (int o = 16; o > 0; o >>= 1) {
			float u = __shfl_xor_sync(0xffffffffu, v, o);
			v = is_max ? fmaxf(v, u) : v + u;
		}
		if (lane == 0)
			red[0] = v;
	}
	__syncthreads();
	v = red[0];
	__syncthreads();
	return v;
}

// One block per row: y = softmax(y + b), in place.
__global__ void __launch_bounds__(THREADS) bias_softmax(float *y, const float *b, int N)
{
	__shared__ float red[THREADS / 32];
	float *row = y + (long long)blockIdx.x * N;
	float mx = -INFINITY;
	for (int j = threadIdx.x; j < N; j += THREADS)
		mx = fmaxf(mx, row[j] + b[j]);
	mx = block_reduce(mx, true, red);
	float sum = 0.0f;
	for (int j = threadIdx.x; j < N; j += THREADS)
		sum += expf(row[j] + b[j] - mx);
	sum = block_reduce(sum, false, red);
	float inv = 1.0f / sum;
	for (int j = threadIdx.x; j < N; j += THREADS)
		row[j] = expf(row[j] + b[j] - mx) * inv;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	int M = (int)a->params[0], N = (int)a->params[1], K = (int)a->params[2];
	const float *x = (const float *)a->inputs[0].ptr, *w = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	static cublasHandle_t h;
	if (!h && cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
		return -1;
	const float one = 1.0f, zero = 0.0f;
	if (cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS ||
	    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS ||
	    cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w, K, x, K, &zero, y, N) !=
		    CUBLAS_STATUS_SUCCESS)
		return -2;
	bias_softmax<<<M, THREADS, 0, stream>>>(y, b, N);
	return cudaGetLastError() == cudaSuccess ? 0 : -3;
}
