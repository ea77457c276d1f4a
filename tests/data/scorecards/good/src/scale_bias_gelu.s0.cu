// scale_bias_gelu, sample 0 (fixture)
#include "ka_kernel.h"

__global__ void k(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && x[i] < 1e30f) /* <escaped> & "quoted" */
		y[i] = x[i];
}
