// expect: ok
// Device, kernel-attribute and occupancy queries must see the H200 figures
// through CUDA 13's structure layouts; ka_launch returns a distinct nonzero
// code for the first wrong answer (the plan's status then says which).
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void __launch_bounds__(256) copy_kernel(const float *x, float *z, long long n)
{
	__shared__ float t[256];
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	t[threadIdx.x] = i < n ? x[i] : 0.0f;
	__syncthreads();
	if (i < n)
		z[i] = t[threadIdx.x];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	cudaDeviceProp p;
	if (cudaGetDeviceProperties(&p, 0) != cudaSuccess)
		return 10;
	if (p.multiProcessorCount != 132 || p.major != 9 || p.minor != 0)
		return 11;
	if (p.l2CacheSize != 62914560 || p.sharedMemPerBlockOptin != 232448)
		return 12;
	if (p.maxThreadsPerBlock != 1024 || p.warpSize != 32 || p.maxGridSize[1] != 65535)
		return 13;
	if (p.sharedMemPerMultiprocessor != 233472 || p.regsPerMultiprocessor != 65536)
		return 14;
	if (p.clusterLaunch != 1 || p.reservedSharedMemPerBlock != 1024)
		return 15;
	cudaFuncAttributes fa;
	if (cudaFuncGetAttributes(&fa, copy_kernel) != cudaSuccess)
		return 20;
	if (fa.numRegs <= 0 || fa.maxThreadsPerBlock != 256 || fa.sharedSizeBytes < 1024)
		return 21;
	int v = 0;
	cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
	if (v != 232448)
		return 30;
	int blocks = 0, min_grid = 0, best = 0;
	cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_kernel, 256, 0);
	if (blocks < 1 || blocks > 8)
		return 40;
	if (cudaOccupancyMaxPotentialBlockSize(&min_grid, &best, copy_kernel, 0, 0) != cudaSuccess ||
	    best < 32 || best > 256)
		return 41;
	int dev = -1, count = 0;
	if (cudaGetDevice(&dev) != cudaSuccess || dev != 0 || cudaGetDeviceCount(&count) != cudaSuccess ||
	    count != 1)
		return 50;
	long long n = a->inputs[0].numel;
	copy_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>((const float *)a->inputs[0].ptr,
								     (float *)a->outputs[0].ptr, n);
	if (cudaPeekAtLastError() != cudaSuccess || cudaGetLastError() != cudaSuccess)
		return 60;
	return 0;
}
