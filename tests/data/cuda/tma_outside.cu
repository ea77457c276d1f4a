// expect: record_error
// A tensor map whose global extent runs past its buffer: x (1000 floats,
// 4000 bytes) described as 11 rows of 100 floats (4400 bytes). The recorder
// knows the buffer sizes, so cuTensorMapEncodeTiled itself is the
// record_error (a hand-written plan with such a map fails plan_check_refs in
// the runner: launch_error).
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
	cuuint64_t dims[2] = {100, 11}, strides[1] = {400};
	cuuint32_t box[2] = {100, 2}, es[2] = {1, 1};
	if (cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, a->inputs[0].ptr, dims,
				   strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
				   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
				   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
		return 1;
	touch<<<1, 32, 0, stream>>>(m, (float *)a->outputs[0].ptr);
	return 0;
}
