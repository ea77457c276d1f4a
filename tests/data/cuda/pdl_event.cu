// expect: record_error
// cudaLaunchAttributeProgrammaticEvent is not recorded (it names an event,
// and events are the runner's alone): record_error naming the attribute.
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void copy(const float *x, float *y, long long n)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long n = a->inputs[0].numel;
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeProgrammaticEvent;
	attr[0].val.programmaticEvent.event = nullptr;
	attr[0].val.programmaticEvent.flags = 0;
	attr[0].val.programmaticEvent.triggerAtBlockStart = 0;
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = dim3((unsigned)((n + 255) / 256));
	cfg.blockDim = dim3(256);
	cfg.stream = stream;
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	cudaError_t err = cudaLaunchKernelEx(&cfg, copy, (const float *)a->inputs[0].ptr,
					     (float *)a->outputs[0].ptr, n);
	return err == cudaSuccess ? 0 : 1;
}
