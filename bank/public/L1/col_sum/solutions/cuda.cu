// col_sum, CUDA solution: torch.sum(x, dim=0).
//
// A block of 32 x 8 threads owns a strip of columns (128 with float4 loads
// when C % 4 == 0 and x is 16-byte aligned, else 32 with scalar loads) and a
// slice of the rows: each thread walks every 8th row of the slice, four rows
// per step so that four loads are in flight, keeping one float4 of column
// sums; the 8 row groups are combined in shared memory. The rows are split
// over grid.y so that about 8 blocks run per SM; each split writes its
// partial sums to the workspace and a second small kernel adds the splits
// per column (one launch when one split suffices). x is read once.
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

static const int TY = 8;	  // row groups per block
static const int MAX_SPLITS = 64; // row slices

template <int V> struct vec;
template <> struct vec<1> {
	typedef float t;
	__device__ static float zero() { return 0.f; }
	__device__ static void add(float &a, float b) { a += b; }
};
template <> struct vec<4> {
	typedef float4 t;
	__device__ static float4 zero() { return make_float4(0.f, 0.f, 0.f, 0.f); }
	__device__ static void add(float4 &a, float4 b)
	{
		a.x += b.x;
		a.y += b.y;
		a.z += b.z;
		a.w += b.w;
	}
};

// part[split, c] (or y when splits == 1) = sum of x[r, c] over the split's rows.
template <int V>
__global__ void __launch_bounds__(32 * TY)
colsum_kernel(const float *__restrict__ x, float *__restrict__ part, long long R, long long C, long long rows_per)
{
	typedef typename vec<V>::t T;
	__shared__ T sm[TY][32];
	const long long cv = C / V; // columns in units of T
	const long long q = (long long)blockIdx.x * 32 + threadIdx.x;
	const long long r0 = (long long)blockIdx.y * rows_per;
	const long long r1 = min(R, r0 + rows_per);
	const T *xv = reinterpret_cast<const T *>(x);
	T a = vec<V>::zero(), b = vec<V>::zero();
	if (q < cv) {
		long long r = r0 + threadIdx.y;
		for (; r + 3 * TY < r1; r += 4 * TY) {
			T u0 = __ldcs(xv + r * cv + q), u1 = __ldcs(xv + (r + TY) * cv + q);
			T u2 = __ldcs(xv + (r + 2 * TY) * cv + q), u3 = __ldcs(xv + (r + 3 * TY) * cv + q);
			vec<V>::add(a, u0);
			vec<V>::add(b, u1);
			vec<V>::add(a, u2);
			vec<V>::add(b, u3);
		}
		for (; r < r1; r += TY)
			vec<V>::add(a, __ldcs(xv + r * cv + q));
		vec<V>::add(a, b);
	}
	sm[threadIdx.y][threadIdx.x] = a;
	__syncthreads();
	if (threadIdx.y == 0 && q < cv) {
		for (int k = 1; k < TY; k++)
			vec<V>::add(a, sm[k][threadIdx.x]);
		reinterpret_cast<T *>(part + (long long)blockIdx.y * C)[q] = a;
	}
}

__global__ void combine_kernel(const float *__restrict__ part, float *__restrict__ y, long long C, int splits)
{
	long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= C)
		return;
	float s = 0.f;
	for (int k = 0; k < splits; k++)
		s += part[(long long)k * C + c];
	y[c] = s;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, C; input x [R, C] fp32; output y [C] fp32.
	long long R = a->params[0], C = a->params[1];
	const float *x = (const float *)a->inputs[0].ptr;
	float *y = (float *)a->outputs[0].ptr;
	int vec4 = C % 4 == 0 && ((uintptr_t)x & 15) == 0;
	long long strips = (C / (vec4 ? 4 : 1) + 31) / 32;
	long long splits = (8 * 132 + strips - 1) / strips;
	long long max_splits = (R + 4 * TY - 1) / (4 * TY); // at least 4 rows per thread
	splits = splits > MAX_SPLITS ? MAX_SPLITS : splits;
	splits = splits > max_splits ? max_splits : splits;
	splits = splits < 1 ? 1 : splits;
	long long rows_per = (R + splits - 1) / splits;
	float *part = y;
	if (splits > 1) {
		part = (float *)ka_workspace((size_t)splits * (size_t)C * sizeof(float));
		if (!part)
			return -1;
	}
	dim3 grid((unsigned)strips, (unsigned)splits), block(32, TY);
	if (vec4)
		colsum_kernel<4><<<grid, block, 0, stream>>>(x, part, R, C, rows_per);
	else
		colsum_kernel<1><<<grid, block, 0, stream>>>(x, part, R, C, rows_per);
	if (splits > 1)
		combine_kernel<<<(unsigned)((C + 255) / 256), 256, 0, stream>>>(part, y, C, (int)splits);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
