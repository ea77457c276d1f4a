// expect: record_error
// Copies a host array to the output instead of computing it.
#include <cuda_runtime.h>
#include "ka_kernel.h"

static float host_result[1 << 16];

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	long long n = a->outputs[0].numel;
	if (n > (1 << 16))
		n = 1 << 16;
	cudaMemcpyAsync(a->outputs[0].ptr, host_result, (size_t)n * sizeof(float),
			cudaMemcpyHostToDevice, stream);
	return 0;
}
