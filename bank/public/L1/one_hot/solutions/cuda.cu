// one_hot, CUDA solution: F.one_hot(idx, C) with int64 output.
//
// One warp per row (8 rows per 256-thread block, grid-stride over the rows):
// lane 0's load of idx[n] is broadcast, then the lanes write the row as
// 16-byte pairs of int64 with streaming stores (when C is even and y is
// 16-byte aligned; one element per store otherwise). No division per
// element and no second pass: every byte of y is written once.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int ROWS = 8;

template <bool VEC>
__global__ void __launch_bounds__(32 * ROWS)
onehot_kernel(const long long *__restrict__ idx, long long *__restrict__ y, long long N, long long C)
{
	const int lane = threadIdx.x;
	for (long long n = (long long)blockIdx.x * ROWS + threadIdx.y; n < N; n += (long long)gridDim.x * ROWS) {
		long long k = __shfl_sync(0xffffffffu, lane == 0 ? __ldcs(idx + n) : 0ll, 0);
		long long *yr = y + n * C;
		if (VEC) {
			longlong2 *y2 = reinterpret_cast<longlong2 *>(yr);
			for (long long q = lane; q < C / 2; q += 32)
				__stcs(y2 + q, make_longlong2(2 * q == k, 2 * q + 1 == k));
		} else {
			for (long long c = lane; c < C; c += 32)
				__stcs(yr + c, (long long)(c == k));
		}
	}
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params N, C; input idx [N] int64; output y [N, C] int64.
	long long N = a->params[0], C = a->params[1];
	const long long *idx = (const long long *)a->inputs[0].ptr;
	long long *y = (long long *)a->outputs[0].ptr;
	long long blocks = (N + ROWS - 1) / ROWS;
	unsigned grid = (unsigned)(blocks > 132 * 64 ? 132 * 64 : blocks);
	dim3 block(32, ROWS);
	if (C % 2 == 0 && ((uintptr_t)y & 15) == 0)
		onehot_kernel<true><<<grid, block, 0, stream>>>(idx, y, N, C);
	else
		onehot_kernel<false><<<grid, block, 0, stream>>>(idx, y, N, C);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
