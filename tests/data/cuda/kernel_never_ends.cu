// expect: ok
// A kernel that never ends (ok at the record stage; the runner's watchdog
// catches it).
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void spin(float *z)
{
	volatile int forever = 1;
	while (forever)
		z[threadIdx.x] = 0.0f;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	spin<<<1, 32, 0, stream>>>((float *)a->outputs[0].ptr);
	return 0;
}
