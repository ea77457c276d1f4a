// expect: record_error
// cuBLAS allowed, but C (y, 1000 floats) as 100 x 11 with ldc = 100 runs 100
// floats past its end: the recorder's plan_gemm_check refuses it.
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "ka_kernel.h"

__global__ void touch(float *y)
{
	y[0] = 1.0f;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	const float *x = (const float *)a->inputs[0].ptr, *w = (const float *)a->inputs[1].ptr;
	float *y = (float *)a->outputs[0].ptr;
	cublasHandle_t h;
	cublasCreate(&h);
	cublasSetStream(h, stream);
	const float one = 1.0f, zero = 0.0f;
	cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 100, 11, 1, &one, x, 100, w, 1, &zero, y, 100);
	touch<<<1, 1, 0, stream>>>(y);
	return 0;
}
