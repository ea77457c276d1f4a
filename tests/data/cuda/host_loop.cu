// expect: timeout
// Never returns from host code.
#include <cuda_runtime.h>
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	volatile unsigned long long i = 0;
	for (;;)
		i++;
	return 0;
}
