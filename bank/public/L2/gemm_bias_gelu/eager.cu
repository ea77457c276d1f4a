// gemm_bias_gelu, eager baseline: torch.nn.functional.gelu(x @ w.T + b) as
// PyTorch eager runs it: one library call or kernel per op, intermediates as
// full [M, N] tensors in memory (scratch from ka_workspace):
//   t1 = x @ w.T     cublasSgemm, CUBLAS_DEFAULT_MATH (fp32, no tf32: PyTorch's
//                    default, torch.backends.cuda.matmul.allow_tf32 = False)
//   t2 = t1 + b      broadcast add kernel
//   y  = gelu(t2)    exact erf GELU kernel
// Trusted code: it runs natively in the runner, not through the recorder.
// The cuBLAS handle is created on the first call (a function-local static);
// each call sets the stream and a workspace carved out of ka_workspace, so
// cuBLAS allocates nothing while the runner captures or replays the call.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int THREADS = 256;
static const size_t CUBLAS_WS_BYTES = 32u << 20; // NVIDIA's advice for Hopper

__global__ void add_bcast(const float *__restrict__ a, const float *__restrict__ v,
			  float *__restrict__ out, long long n, long long N)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = a[i] + v[i % N];
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
	char *ws = (char *)ka_workspace(2 * tbytes + CUBLAS_WS_BYTES);
	if (!ws)
		return -1;
	float *t1 = (float *)ws, *t2 = (float *)(ws + tbytes);
	if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS ||
	    cublasSetWorkspace(handle, ws + 2 * tbytes, CUBLAS_WS_BYTES) != CUBLAS_STATUS_SUCCESS)
		return -1;
	// cuBLAS is column-major: row-major t1 [M, N] is column-major t1^T [N, M]
	// = w (N x K) * x^T (K x M); row-major w [N, K] is column-major w^T with
	// leading dimension K, hence op T on it; row-major x is column-major x^T.
	const float one = 1.0f, zero = 0.0f;
	if (cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, w, (int)K, x,
			(int)K, &zero, t1, (int)N) != CUBLAS_STATUS_SUCCESS)
		return -1;
	unsigned blocks = (unsigned)((n + THREADS - 1) / THREADS);
	add_bcast<<<blocks, THREADS, 0, stream>>>(t1, b, t2, n, N);
	gelu<<<blocks, THREADS, 0, stream>>>(t2, y, n);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
