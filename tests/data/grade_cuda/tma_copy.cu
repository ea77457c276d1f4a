// expect: ok
// TMA: each block loads a tile of 256 floats of x with cp.async.bulk.tensor
// through a tensor map (rank 1, a __grid_constant__ const CUtensorMap
// parameter) and computes y = gelu(x * scale + bias) from it; the last,
// partial tile is done by a second kernel with plain loads, so the map covers
// whole tiles only (and a shape under one tile has no map at all).
#include <cuda.h>
#include <cuda_runtime.h>
#include "ka_kernel.h"

#define TILE 256

__device__ static float gelu(float v)
{
	return 0.5f * v * (1.0f + erff(v * 0.70710678f));
}

__global__ void gelu_tma(const __grid_constant__ CUtensorMap mx, const float *s, const float *b,
			 float *y, long long C)
{
	__shared__ alignas(128) float tile[TILE];
	__shared__ alignas(8) unsigned long long bar;
	unsigned ba = (unsigned)__cvta_generic_to_shared(&bar);
	int c0 = blockIdx.x * TILE;
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(ba));
		asm volatile("fence.proxy.async.shared::cta;");
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(ba),
			     "r"((unsigned)sizeof tile));
		asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
			     " [%0], [%1, {%2}], [%3];" ::"r"((unsigned)__cvta_generic_to_shared(tile)),
			     "l"((unsigned long long)&mx), "r"(c0), "r"(ba)
			     : "memory");
	}
	__syncthreads();
	unsigned done = 0;
	while (!done)
		asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;"
			     " selp.u32 %0, 1, 0, p; }"
			     : "=r"(done)
			     : "r"(ba)
			     : "memory");
	long long i = (long long)c0 + threadIdx.x;
	long long c = i % C;
	y[i] = gelu(tile[threadIdx.x] * s[c] + b[c]);
}

__global__ void gelu_tail(const float *x, const float *s, const float *b, float *y, long long start,
			  long long n, long long C)
{
	long long i = start + blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = gelu(x[i] * s[i % C] + b[i % C]);
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long R = a->params[0], C = a->params[1], n = R * C;
	const float *x = (const float *)a->inputs[0].ptr, *s = (const float *)a->inputs[1].ptr;
	const float *b = (const float *)a->inputs[2].ptr;
	float *y = (float *)a->outputs[0].ptr;
	long long tiles = n / TILE, done = tiles * TILE;
	if (done > (1ll << 32) || tiles > 2147483647ll)
		return 1;
	if (tiles > 0) {
		CUtensorMap mx;
		cuuint64_t dims[1] = {(cuuint64_t)done}, strides[1] = {0};
		cuuint32_t box[1] = {TILE}, es[1] = {1};
		if (cuTensorMapEncodeTiled(&mx, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, (void *)x, dims,
					   strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
					   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
					   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
			return 1;
		gelu_tma<<<(unsigned)tiles, TILE, 0, stream>>>(mx, s, b, y, C);
	}
	if (n > done)
		gelu_tail<<<1, TILE, 0, stream>>>(x, s, b, y, done, n, C);
	return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
