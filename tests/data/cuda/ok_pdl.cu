// expect: ok
// Programmatic dependent launch between the candidate's own kernels, through
// the cudaLaunchKernelEx template: the first kernel lets its dependent start
// early (cudaTriggerProgrammaticLaunchCompletion), the second waits for it
// (cudaGridDependencySynchronize) before reading its output, and is launched
// with a cluster of 2 as well. Both launches carry the attribute; the plan
// records both, the runner drops it on the first (docs/cuda-target.md).
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void scale(const float *x, float *tmp, long long n)
{
	cudaTriggerProgrammaticLaunchCompletion();
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < n)
		tmp[i] = 2.0f * x[i];
}

__global__ void finish(const float *tmp, const float *y, float *z, long long n)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	cudaGridDependencySynchronize();
	if (i < n)
		z[i] = tmp[i] + y[i];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long n = a->inputs[0].numel;
	float *tmp = (float *)ka_workspace((size_t)n * sizeof(float));
	if (!tmp)
		return 2;
	cudaLaunchAttribute attr[2];
	attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attr[0].val.programmaticStreamSerializationAllowed = 1;
	attr[1].id = cudaLaunchAttributeClusterDimension;
	attr[1].val.clusterDim.x = 2;
	attr[1].val.clusterDim.y = 1;
	attr[1].val.clusterDim.z = 1;
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = dim3((unsigned)((n + 511) / 512 * 2));
	cfg.blockDim = dim3(256);
	cfg.stream = stream;
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	if (cudaLaunchKernelEx(&cfg, scale, (const float *)a->inputs[0].ptr, tmp, n) !=
	    cudaSuccess)
		return 3;
	cfg.numAttrs = 2;
	cudaError_t err = cudaLaunchKernelEx(&cfg, finish, (const float *)tmp,
					     (const float *)a->inputs[1].ptr,
					     (float *)a->outputs[0].ptr, n);
	return err == cudaSuccess ? 0 : 1;
}
