// row_sum_halfwarp.cu: a correct row sum for the task row_sum in which half
// of each warp exits before the other half's shuffles (legal: the lanes a
// mask names that have exited need not take part), for the CPU emulation
// harness's test (tests/bank/baselines_emu.sh): the shuffles complete when
// the last exiting lane ends. With the [undefined_lane] line's xor of 16
// added, lanes read values of exited lanes (undefined), which must fail.
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void __launch_bounds__(32) row_sum_halfwarp(const float *x, float *y, long long C)
{
	if (threadIdx.x >= 16)
		return;
	const float *xr = x + blockIdx.x * C;
	float v = 0.f;
	for (long long c = threadIdx.x; c < C; c += 16)
		v += xr[c];
	// [undefined_lane]
	for (int o = 8; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if (threadIdx.x == 0)
		y[blockIdx.x] = v;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long R = a->params[0], C = a->params[1];
	row_sum_halfwarp<<<(unsigned)R, 32, 0, stream>>>((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr,
							 C);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
