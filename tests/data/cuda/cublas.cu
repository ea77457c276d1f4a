// expect: forbidden
// Calls cuBLAS (declared by hand, so the include check does not catch it) in a
// task whose policy does not allow libraries: the symbol check must.
#include <cuda_runtime.h>
#include "ka_kernel.h"

extern "C" int cublasCreate_v2(void **handle);

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	void *h = 0;
	return cublasCreate_v2(&h);
}
