// expect: runtime_fault
// Dereferences a device pointer on the host.
#include <cuda_runtime.h>
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	volatile float *z = (volatile float *)a->outputs[0].ptr;
	z[0] = 1.0f;
	return 0;
}
