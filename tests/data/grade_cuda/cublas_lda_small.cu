// expect: record_error
// gemm_bias_softmax through cuBLAS with lda one less than cuBLAS allows
// (max(1, K) for the transposed W): the recorder refuses the call, naming lda;
// a hand-written plan with it fails the runner's plan_check_refs
// (tests/gpu/grade_cublas.sh).
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "ka_kernel.h"

__global__ void bias_softmax_stub(float *y, const float *b, int M, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < M * N)
		y[i] += b[i % N];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	int M = (int)a->params[0], N = (int)a->params[1], K = (int)a->params[2];
	const float *x = (const float *)a->inputs[0].ptr, *w = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	cublasHandle_t h;
	cublasCreate(&h);
	cublasSetStream(h, stream);
	const float one = 1.0f, zero = 0.0f;
	cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w, K - 1, x, K, &zero, y, N);
	bias_softmax_stub<<<(M * N + 255) / 256, 256, 0, stream>>>(y, b, M, N);
	return 0;
}
