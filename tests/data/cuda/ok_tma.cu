// expect: ok
// TMA: z = x + y with x and y loaded by cp.async.bulk.tensor through two
// tensor maps (rank 2, the N = 1000 floats viewed as 10 rows of 100) passed
// as __grid_constant__ const CUtensorMap parameters. The x map is encoded
// twice with the same arguments: the plan holds 2 maps, not 3.
#include <cuda.h>
#include <cuda_runtime.h>
#include "ka_kernel.h"

#define COLS 100
#define ROWS_PER_BLOCK 2

__device__ static void tma_load_2d(unsigned dst, const CUtensorMap *m, int c0, int c1,
				   unsigned bar)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
		     "l"((unsigned long long)m), "r"(c0), "r"(c1), "r"(bar)
		     : "memory");
}

__global__ void add_tma(const __grid_constant__ CUtensorMap mx, const __grid_constant__ CUtensorMap my,
			float *z, long long n)
{
	__shared__ alignas(128) float tx[COLS * ROWS_PER_BLOCK];
	__shared__ alignas(128) float ty[COLS * ROWS_PER_BLOCK];
	__shared__ alignas(8) unsigned long long bar;
	unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
	int row0 = blockIdx.x * ROWS_PER_BLOCK;
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
		asm volatile("fence.proxy.async.shared::cta;");
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b),
			     "r"((unsigned)(2 * sizeof tx)));
		tma_load_2d((unsigned)__cvta_generic_to_shared(tx), &mx, 0, row0, b);
		tma_load_2d((unsigned)__cvta_generic_to_shared(ty), &my, 0, row0, b);
	}
	__syncthreads();
	unsigned done = 0;
	while (!done)
		asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;"
			     " selp.u32 %0, 1, 0, p; }"
			     : "=r"(done)
			     : "r"(b)
			     : "memory");
	for (int i = threadIdx.x; i < COLS * ROWS_PER_BLOCK; i += blockDim.x) {
		long long g = (long long)row0 * COLS + i;
		if (g < n)
			z[g] = tx[i] + ty[i];
	}
}

static int encode(CUtensorMap *m, const void *p, long long rows)
{
	cuuint64_t dims[2] = {COLS, (cuuint64_t)rows}, strides[1] = {COLS * sizeof(float)};
	cuuint32_t box[2] = {COLS, ROWS_PER_BLOCK}, es[2] = {1, 1};
	return cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)p, dims,
				      strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
				      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
				      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long n = a->inputs[0].numel;
	if (n % COLS)
		return 1;
	long long rows = n / COLS;
	CUtensorMap mx, mx2, my;
	if (encode(&mx, a->inputs[0].ptr, rows) || encode(&mx2, a->inputs[0].ptr, rows) ||
	    encode(&my, a->inputs[1].ptr, rows))
		return 1;
	unsigned grid = (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
	add_tma<<<grid, 128, 0, stream>>>(mx2, my, (float *)a->outputs[0].ptr, n);
	return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
