// masked_fill, CUDA solution: x.masked_fill(mask, fill).
//
// Grid-stride over groups of 4 elements: a float4 load of x and a 4-byte
// load of the mask when both are aligned (scalar loads otherwise), a select
// against the scalar fill (a->scalars[0]) and a float4 store.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

template <bool VEC>
__global__ void __launch_bounds__(256)
mf_kernel(const float *__restrict__ x, const unsigned char *__restrict__ m, float *__restrict__ y,
	  long long n, float fill)
{
	long long stride = (long long)gridDim.x * blockDim.x;
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (VEC) {
		for (long long q = t; q < n / 4; q += stride) {
			float4 v = reinterpret_cast<const float4 *>(x)[q];
			uchar4 k = reinterpret_cast<const uchar4 *>(m)[q];
			v.x = k.x ? fill : v.x;
			v.y = k.y ? fill : v.y;
			v.z = k.z ? fill : v.z;
			v.w = k.w ? fill : v.w;
			reinterpret_cast<float4 *>(y)[q] = v;
		}
		for (long long i = n / 4 * 4 + t; i < n; i += stride)
			y[i] = m[i] ? fill : x[i];
	} else {
		for (long long i = t; i < n; i += stride)
			y[i] = m[i] ? fill : x[i];
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; scalar fill; inputs x [R, C] fp32, mask [R, C] bool; output y.
	long long n = a->params[0] * a->params[1];
	float fill = (float)a->scalars[0];
	const float *x = (const float *)a->inputs[0].ptr;
	const unsigned char *m = (const unsigned char *)a->inputs[1].ptr;
	float *y = (float *)a->outputs[0].ptr;
	long long blocks = (n / 4 + 255) / 256;
	unsigned grid = (unsigned)(blocks < 1 ? 1 : blocks > 65535 ? 65535 : blocks);
	if (((uintptr_t)x & 15) == 0 && ((uintptr_t)y & 15) == 0 && ((uintptr_t)m & 3) == 0)
		mf_kernel<true><<<grid, 256, 0, stream>>>(x, m, y, n, fill);
	else
		mf_kernel<false><<<grid, 256, 0, stream>>>(x, m, y, n, fill);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
