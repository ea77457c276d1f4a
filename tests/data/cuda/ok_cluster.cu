// expect: ok
// cudaLaunchKernelEx with a cluster of 2 blocks, dynamic shared memory over
// 48 KiB after cudaFuncSetAttribute.
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void add_cluster(const float *x, const float *y, float *z, long long n)
{
	extern __shared__ float buf[];
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	buf[threadIdx.x] = i < n ? x[i] : 0.0f;
	__syncthreads();
	if (i < n)
		z[i] = buf[threadIdx.x] + y[i];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long n = a->inputs[0].numel;
	size_t smem = 64 * 1024;
	if (cudaFuncSetAttribute(add_cluster, cudaFuncAttributeMaxDynamicSharedMemorySize,
				 (int)smem) != cudaSuccess)
		return 4;
	cudaLaunchConfig_t cfg = {};
	unsigned grid = (unsigned)((n + 255) / 256);
	grid = (grid + 1) / 2 * 2;
	cfg.gridDim = dim3(grid);
	cfg.blockDim = dim3(256);
	cfg.dynamicSmemBytes = smem;
	cfg.stream = stream;
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = 2;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	cudaError_t err = cudaLaunchKernelEx(&cfg, add_cluster, (const float *)a->inputs[0].ptr,
					     (const float *)a->inputs[1].ptr,
					     (float *)a->outputs[0].ptr, n);
	return err == cudaSuccess ? 0 : 1;
}
