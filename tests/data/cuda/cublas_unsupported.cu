// expect: record_error
// cuBLAS allowed, but cublasSetWorkspace_v2 is not among the recorded entry
// points: the recorder names it before the candidate is loaded.
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "ka_kernel.h"

__global__ void touch(float *y)
{
	y[0] = 1.0f;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	float *y = (float *)a->outputs[0].ptr;
	cublasHandle_t h;
	cublasCreate(&h);
	cublasSetStream(h, stream);
	cublasSetWorkspace(h, ka_workspace(1 << 20), 1 << 20);
	touch<<<1, 1, 0, stream>>>(y);
	return 0;
}
