// gemm_bias_gelu, compiled baseline: torch.nn.functional.gelu(x @ w.T + b) as
// torch.compile produces it by default: the GEMM through the vendor library
// (cublasSgemm, fp32, no tf32) into a scratch [M, N] tensor, then bias + GELU
// fused into one pointwise kernel (Inductor moves the bias add of an addmm
// into the pointwise epilogue that follows it).
//
// Why not cuBLASLt with CUBLASLT_EPILOGUE_GELU_BIAS (one kernel)? cuBLASLt's
// GELU is the tanh approximation, which differs from the exact erf GELU of
// this task by up to 4.7e-4 at O(1) outputs: over the task's tolerance
// (1e-4 + 1e-4 |y|), so that baseline would be wrong, not just different.
// Trusted code: it runs natively in the runner, not through the recorder.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int THREADS = 256, PER_THREAD = 4, BLOCK = THREADS * PER_THREAD;
static const size_t CUBLAS_WS_BYTES = 32u << 20;

__global__ void bias_gelu(const float *__restrict__ t, const float *__restrict__ b,
			  float *__restrict__ y, long long n, long long N)
{
	long long base = (long long)blockIdx.x * BLOCK + threadIdx.x;
#pragma unroll
	for (int j = 0; j < PER_THREAD; j++) {
		long long i = base + (long long)j * THREADS;
		if (i < n) {
			float v = t[i] + b[i % N];
			y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
		}
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	static cublasHandle_t handle;
	if (!handle) {
		if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
			return -1;
		cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
	}
	// Task order: params M, N, K; inputs x [M, K], w [N, K], b [N]; output y [M, N].
	long long M = a->params[0], N = a->params[1], K = a->params[2], n = M * N;
	const float *x = (const float *)a->inputs[0].ptr;
	const float *w = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	size_t tbytes = ((size_t)n * sizeof(float) + 255) / 256 * 256;
	char *ws = (char *)ka_workspace(tbytes + CUBLAS_WS_BYTES);
	if (!ws)
		return -1;
	float *t = (float *)ws;
	if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS ||
	    cublasSetWorkspace(handle, ws + tbytes, CUBLAS_WS_BYTES) != CUBLAS_STATUS_SUCCESS)
		return -1;
	// Column-major view: t^T [N, M] = w (op T on column-major w^T, ld K) * x^T.
	const float one = 1.0f, zero = 0.0f;
	if (cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, w, (int)K, x,
			(int)K, &zero, t, (int)N) != CUBLAS_STATUS_SUCCESS)
		return -1;
	unsigned blocks = (unsigned)((n + BLOCK - 1) / BLOCK);
	bias_gelu<<<blocks, THREADS, 0, stream>>>(t, b, y, n, N);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
