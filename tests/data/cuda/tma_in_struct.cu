// expect: record_error
// A tensor map passed inside a struct by value (192 bytes: the map, then a
// pointer). Only a whole __grid_constant__ const CUtensorMap parameter can
// carry one, since the runner replaces exactly those 128 bytes.
#include <cuda.h>
#include <cuda_runtime.h>
#include "ka_kernel.h"

struct args {
	CUtensorMap m;
	float *z;
};

__global__ void touch(const __grid_constant__ args p)
{
	p.z[threadIdx.x] = 0.0f;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	args p;
	cuuint64_t dims[1] = {1000}, strides[1] = {0};
	cuuint32_t box[1] = {256}, es[1] = {1};
	if (cuTensorMapEncodeTiled(&p.m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, a->inputs[0].ptr, dims,
				   strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
				   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
				   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
		return 1;
	p.z = (float *)a->outputs[0].ptr;
	touch<<<1, 32, 0, stream>>>(p);
	return 0;
}
