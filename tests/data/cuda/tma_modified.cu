// expect: record_error
// A tensor map whose opaque bytes were changed after encoding (as if the
// candidate patched the address in place): the recorder cannot know what the
// change means, so it refuses the launch.
#include <cuda.h>
#include <cuda_runtime.h>
#include "ka_kernel.h"

__global__ void touch(const __grid_constant__ CUtensorMap m, float *z)
{
	z[threadIdx.x] = 0.0f;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	CUtensorMap m;
	cuuint64_t dims[1] = {1000}, strides[1] = {0};
	cuuint32_t box[1] = {256}, es[1] = {1};
	if (cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, a->inputs[0].ptr, dims,
				   strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
				   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
				   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
		return 1;
	m.opaque[3] ^= 1;
	touch<<<1, 32, 0, stream>>>(m, (float *)a->outputs[0].ptr);
	return 0;
}
