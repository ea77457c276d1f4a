// masked_fill, eager baseline: x.masked_fill(mask, fill) as PyTorch eager runs
// it: one TensorIterator launch over two inputs of different dtypes (float,
// bool), so the unrolled, non-vectorised kernel (bank/lib/eager.cuh's
// EW_THREADS x EW_WORK elements per block). The scalar is a constant of the
// launch, as PyTorch bakes a Python float in (-0.5, the task's "fill").
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

__global__ void __launch_bounds__(ka::EW_THREADS)
masked_fill_kernel(const float *__restrict__ x, const bool *__restrict__ m, float *__restrict__ y,
		   long long n, float fill)
{
	long long i0 = (long long)blockIdx.x * ka::EW_THREADS * ka::EW_WORK + threadIdx.x;
	long long stride = (long long)gridDim.x * ka::EW_THREADS * ka::EW_WORK;
	for (; i0 < n; i0 += stride)
#pragma unroll
		for (int j = 0; j < ka::EW_WORK; j++) {
			long long i = i0 + (long long)j * ka::EW_THREADS;
			if (i < n)
				y[i] = m[i] ? fill : x[i];
		}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; inputs x [R, C] fp32, mask [R, C] bool; output y [R, C] fp32.
	long long n = a->params[0] * a->params[1];
	masked_fill_kernel<<<ka::grid_for(n, ka::EW_THREADS * ka::EW_WORK), ka::EW_THREADS, 0, stream>>>(
		(const float *)a->inputs[0].ptr, (const bool *)a->inputs[1].ptr, (float *)a->outputs[0].ptr, n,
		-0.5f);
	return ka::launch_status();
}
