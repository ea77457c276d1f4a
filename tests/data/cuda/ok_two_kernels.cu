// expect: ok
// Two kernels through a workspace, plus a memset and a device-to-device copy;
// the second kernel takes its pointers inside a struct (relocations inside a
// by-value parameter), and queries the device and the occupancy first.
#include <cuda_runtime.h>
#include "ka_kernel.h"

struct io {
	const float *tmp;
	const float *y;
	float *z;
	long long n;
};

__global__ void scale(const float *x, float *tmp, long long n)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < n)
		tmp[i] = 2.0f * x[i];
}

__global__ void finish(struct io p)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < p.n)
		p.z[i] = p.tmp[i] + p.y[i];
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long n = a->inputs[0].numel;
	float *tmp = (float *)ka_workspace((size_t)n * 2 * sizeof(float));
	if (!tmp)
		return 2;
	int sms = 0, blocks = 0;
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
	cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 256, 0);
	if (sms != 132 || blocks < 1)
		return 3;
	cudaMemsetAsync(tmp + n, 0, (size_t)n * sizeof(float), stream);
	unsigned grid = (unsigned)((n + 255) / 256);
	scale<<<grid, 256, 0, stream>>>((const float *)a->inputs[0].ptr, tmp, n);
	cudaMemcpyAsync(tmp + n, tmp, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, stream);
	struct io p = {tmp + n, (const float *)a->inputs[1].ptr, (float *)a->outputs[0].ptr, n};
	finish<<<grid, 256, 0, stream>>>(p);
	return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
