// expect: record_error
// cuBLAS allowed, but the handle's stream is never set: its GEMM would go on
// the legacy default stream, not the stream ka_launch was given.
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
	const float one = 1.0f, zero = 0.0f;
	cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 10, 10, 10, &one, x, 10, x, 10, &zero, y, 10);
	touch<<<1, 1, 0, stream>>>(y);
	return 0;
}
