// row_sum_tree.cu: a correct row sum for the task row_sum (one 256-thread
// block a row, a shared-memory tree), the base of the CPU emulation
// harness's own tests (tests/bank/baselines_emu.sh): the test runs it as it
// is (it must pass) and with one mistake made in each of the lines marked
// [name] below (each must fail; docs/cuda-emu.md says which check finds it).
#include <cuda_runtime.h>
#include "ka_kernel.h"

#define T 256

__global__ void __launch_bounds__(T) row_sum_tree(const float *x, float *y, long long C)
{
	__shared__ float s[T];
	const float *xr = x + blockIdx.x * C;
	float v = 0.f;
	for (long long c = threadIdx.x; c < C; c += T)
		v += xr[c]; // [wrong_index]
	s[threadIdx.x] = v;
	for (int o = T / 2; o > 0; o >>= 1) {
		__syncthreads(); // [missing_sync]
		if (threadIdx.x < o)
			s[threadIdx.x] += s[threadIdx.x + o];
	}
	// The last thread stores what thread 0 added last: only the barrier
	// orders the two (without it, the linear order still passes).
	__syncthreads(); // [race]
	if (threadIdx.x == T - 1)
		y[blockIdx.x] = s[0]; // [oob_write]
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long R = a->params[0], C = a->params[1];
	row_sum_tree<<<(unsigned)R, T, 0, stream>>>((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr,
						    C); // [launch_bounds]
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
