// expect: ok
// cuBLAS under a policy that lists it (test_record_cuda.c records it with
// "libraries":["cublas"]): x, w and y are 1000 floats. y[0..100) = 10 x 10
// x^T w as column-major GEMMs: an Sgemm (A = x as 100 x 10, transposed; B = w
// as 100 x 10), then a GemmStridedBatchedEx of 2 batches of 5 x 10 x 100 with
// TF32 math into y[100..200), then a kernel scaling y[0..200).
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "ka_kernel.h"

__global__ void scale(float *y, long long n)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < n)
		y[i] *= 0.5f;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	const float *x = (const float *)a->inputs[0].ptr, *w = (const float *)a->inputs[1].ptr;
	float *y = (float *)a->outputs[0].ptr;
	cublasHandle_t h;
	if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, stream))
		return -1;
	const float one = 1.0f, zero = 0.0f, two = 2.0f;
	if (cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 10, 10, 100, &one, x, 100, w, 100, &zero, y,
			10))
		return -2;
	cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
	if (cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 5, 10, 100, &two, x, CUDA_R_32F,
				       5, 500, w, CUDA_R_32F, 100, 0, &zero, y + 100, CUDA_R_32F, 5,
				       50, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT))
		return -3;
	cublasDestroy(h);
	scale<<<1, 256, 0, stream>>>(y, 200);
	return cudaGetLastError() == cudaSuccess ? 0 : -4;
}
