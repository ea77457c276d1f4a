// expect: forbidden
// Runs a shell command from host code.
#include <cstdlib>
#include <cuda_runtime.h>
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	return system("id > /tmp/owned");
}
