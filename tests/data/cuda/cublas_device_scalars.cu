// expect: record_error
// cuBLAS allowed, but alpha and beta in device memory
// (CUBLAS_POINTER_MODE_DEVICE): the recorder records host scalars only.
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "ka_kernel.h"

__global__ void touch(float *y)
{
	y[0] = 1.0f;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	const float *x = (const float *)a->inputs[0].ptr;
	float *y = (float *)a->outputs[0].ptr;
	cublasHandle_t h;
	cublasCreate(&h);
	cublasSetStream(h, stream);
	cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
	cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 10, 10, 10, x, x, 10, x, 10, x + 1, y, 10);
	touch<<<1, 1, 0, stream>>>(y);
	return 0;
}
