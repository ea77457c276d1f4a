// expect: forbidden
// Reads a file from host code.
#include <cstdio>
#include <cuda_runtime.h>
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	FILE *f = fopen("/etc/passwd", "r");
	return f ? 0 : 1;
}
