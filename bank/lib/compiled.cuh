// bank/lib/compiled.cuh: the kernels torch.compile (Inductor, Triton) emits,
// for the trusted compiled baselines. A task's compiled.cu composes these.
//
//   - pointwise: one fused kernel over a whole chain of elementwise ops (and
//     casts, and reads of broadcast vectors): Inductor's pointwise template
//     with XBLOCK = 1024 and num_warps = 4: 128 threads, each 8 elements as
//     two 16-byte vectors of the input, math in fp32, one write. The chain is
//     a functor f(value, flat index) -> float; it may read other (broadcast)
//     tensors through pointers it holds, which stay in cache.
//   - row_reduce: a reduction along the contiguous dimension fused with its
//     epilogue: one block per row (XBLOCK = 1), the row looped over in
//     RBLOCK-wide vector chunks, a block reduction, and epi(acc) stored by
//     one thread (Inductor's looped reduction; ops from eager.cuh).
//   - row_two_pass: a reduction followed by a pointwise pass over the same
//     row that uses the result (softmax, normalisation): one block per row;
//     rows up to 8192 floats stay in registers (Inductor's persistent
//     reduction, one read of x), longer rows are read twice (the second read
//     mostly from L2).
//   - col_reduce: a reduction over the outer dimension with its epilogue: a
//     block of 32 columns x 16 row slices, partials in shared memory, the
//     rows split over grid.y into a workspace when there are few columns
//     (Inductor's split reduction), then a tiny combine kernel.
//   - tiled_transpose: x [B, M, N] -> y [B, N, M] through a 64 x 64 tile in
//     shared memory, 16-byte vectors on both sides (Triton's layout
//     conversion for a pointwise kernel whose load and store orders differ).
//   - scatter_add_rows: index_add_ / index_put_(accumulate=True): the
//     pointwise layout over the source elements, an atomic add each (one
//     16-byte vector atomic a thread's 4 elements on sm_90, as Triton's).
//   - generate: a pointwise kernel with no same-index input, y[i] = f(i)
//     (the functor does its own, maybe indirect, loads): Inductor's kernel
//     for an index expression such as embedding, one_hot or cat + slice;
//     generate_spans when each thread's run of outputs reads whole vectors.
//   - block_scan_rows: cumsum along rows, one block per row looping over the
//     row in chunks with a carry (Inductor's scan kernel, tl.associative_scan
//     in a reduction loop).
// Trusted code: it runs natively in the runner. Keep it small and reviewed.
#ifndef KA_BANK_COMPILED_CUH
#define KA_BANK_COMPILED_CUH

#include "eager.cuh"
#include "intdiv.cuh"

namespace ka {

static const int PW_THREADS = 128; // num_warps = 4
static const int PW_BLOCK = 1024;  // XBLOCK

// Triton's fp32 `/`: PTX div.full.f32 (a reciprocal and a multiply, within
// 2 ulp), where nvcc's `/` is the IEEE division (a subroutine with a slow
// path). The emulator's host form is `/`.
__device__ __forceinline__ float triton_div(float a, float b)
{
#ifdef KA_CUDA_EMU
	return a / b;
#else
	float r;
	asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
	return r;
#endif
}

// Inductor's welford_reduce step (triton_helpers): var_op's, with Triton's
// division; the combine (rare: once per lane at the end) stays var_op's.
struct triton_welford_op : var_op {
	__device__ welford_t reduce(welford_t a, float x, long long) const { return welford_step(a, x, triton_div); }
};

// y[i] = f(x[i], i) for i in [0, n): vectors of V elements, 1024 per block.
template <int V, typename Ti, typename To, typename F>
__global__ void __launch_bounds__(PW_THREADS)
pointwise_kernel(const Ti *__restrict__ x, To *__restrict__ y, long long n, F f)
{
	long long b0 = (long long)blockIdx.x * PW_BLOCK;
#pragma unroll
	for (int g = 0; g < PW_BLOCK / (PW_THREADS * V); g++) {
		long long i0 = b0 + ((long long)g * PW_THREADS + threadIdx.x) * V;
		if (i0 + V <= n) {
			vec_t<Ti, V> a = *reinterpret_cast<const vec_t<Ti, V> *>(x + i0);
			vec_t<To, V> r;
#pragma unroll
			for (int j = 0; j < V; j++)
				r.v[j] = from_f<To>(f(to_f(a.v[j]), i0 + j));
			*reinterpret_cast<vec_t<To, V> *>(y + i0) = r;
		} else {
			for (long long i = i0; i < n && i < i0 + V; i++)
				y[i] = from_f<To>(f(to_f(x[i]), i));
		}
	}
}

template <typename Ti, typename To, typename F>
int pointwise(const Ti *x, To *y, long long n, F f, cudaStream_t s)
{
	constexpr int V = vec_of<Ti, To>();
	unsigned blocks = grid_for(n, PW_BLOCK);
	if (aligned16(x) && aligned16(y))
		pointwise_kernel<V><<<blocks, PW_THREADS, 0, s>>>(x, y, n, f);
	else
		pointwise_kernel<1><<<blocks, PW_THREADS, 0, s>>>(x, y, n, f);
	return launch_status();
}

static const int RD_THREADS = 256; // RBLOCK / 4 lanes-worth of float4

// Block-wide combine of an op's accumulator; every thread gets the result.
template <typename Op> __device__ typename Op::acc_t block_combine(typename Op::acc_t a, Op op)
{
	typedef typename Op::acc_t A;
	__shared__ A red[RD_THREADS / 32];
	for (int o = 16; o > 0; o >>= 1)
		a = op.combine(a, shfl(a, o));
	__syncthreads();
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = a;
	__syncthreads();
	a = red[0];
	for (int w = 1; w < RD_THREADS / 32; w++)
		a = op.combine(a, red[w]);
	return a;
}

// acc of op over x[0:C] (one block), V-wide vector loads.
template <int V, typename Ti, typename Op>
__device__ typename Op::acc_t block_row_acc(const Ti *__restrict__ xr, long long C, Op op)
{
	typename Op::acc_t a = op.ident();
	long long cv = C / V * V;
	for (long long c = (long long)threadIdx.x * V; c < cv; c += (long long)RD_THREADS * V) {
		vec_t<Ti, V> q = *reinterpret_cast<const vec_t<Ti, V> *>(xr + c);
#pragma unroll
		for (int j = 0; j < V; j++)
			a = op.reduce(a, to_f(q.v[j]), c + j);
	}
	for (long long c = cv + threadIdx.x; c < C; c += RD_THREADS)
		a = op.reduce(a, to_f(xr[c]), c);
	return block_combine(a, op);
}

// out[r] = epi(op over x[r, :], r).
template <int V, typename Ti, typename To, typename Op, typename E>
__global__ void __launch_bounds__(RD_THREADS)
fused_row_reduce_kernel(const Ti *__restrict__ x, To *__restrict__ out, long long C, Op op, E epi)
{
	typename Op::acc_t a = block_row_acc<V>(x + (long long)blockIdx.x * C, C, op);
	if (threadIdx.x == 0)
		out[blockIdx.x] = epi(a, (long long)blockIdx.x);
}

template <typename Ti, typename To, typename Op, typename E>
int fused_row_reduce(const Ti *x, To *out, long long R, long long C, Op op, E epi, cudaStream_t s)
{
	constexpr int V = 16 / sizeof(Ti);
	if (aligned16(x) && C % V == 0)
		fused_row_reduce_kernel<V><<<(unsigned)R, RD_THREADS, 0, s>>>(x, out, C, op, epi);
	else
		fused_row_reduce_kernel<1><<<(unsigned)R, RD_THREADS, 0, s>>>(x, out, C, op, epi);
	return launch_status();
}

// y[r, c] = epi(x[r, c], acc_r, r, c), acc_r = op over x[r, :]. PER: float
// registers per thread holding the row (0: read the row twice).
template <int PER, typename Op, typename E>
__global__ void __launch_bounds__(RD_THREADS)
row_two_pass_kernel(const float *__restrict__ x, float *__restrict__ y, long long C, Op op, E epi)
{
	long long r = blockIdx.x;
	const float *xr = x + r * C;
	float *yr = y + r * C;
	if (PER > 0) {
		float v[PER > 0 ? PER : 1];
		typename Op::acc_t a = op.ident();
#pragma unroll
		for (int k = 0; k < PER; k++) {
			long long c = (long long)k * RD_THREADS + threadIdx.x;
			v[k] = c < C ? xr[c] : 0.f;
			if (c < C)
				a = op.reduce(a, v[k], c);
		}
		a = block_combine(a, op);
#pragma unroll
		for (int k = 0; k < PER; k++) {
			long long c = (long long)k * RD_THREADS + threadIdx.x;
			if (c < C)
				yr[c] = epi(v[k], a, r, c);
		}
	} else {
		typename Op::acc_t a = op.ident();
		for (long long c = threadIdx.x; c < C; c += RD_THREADS)
			a = op.reduce(a, xr[c], c);
		a = block_combine(a, op);
		for (long long c = threadIdx.x; c < C; c += RD_THREADS)
			yr[c] = epi(xr[c], a, r, c);
	}
}

template <typename Op, typename E>
int row_two_pass(const float *x, float *y, long long R, long long C, Op op, E epi, cudaStream_t s)
{
	long long per = (C + RD_THREADS - 1) / RD_THREADS;
	unsigned g = (unsigned)R;
	if (per <= 4)
		row_two_pass_kernel<4><<<g, RD_THREADS, 0, s>>>(x, y, C, op, epi);
	else if (per <= 16)
		row_two_pass_kernel<16><<<g, RD_THREADS, 0, s>>>(x, y, C, op, epi);
	else if (per <= 32)
		row_two_pass_kernel<32><<<g, RD_THREADS, 0, s>>>(x, y, C, op, epi);
	else
		row_two_pass_kernel<0><<<g, RD_THREADS, 0, s>>>(x, y, C, op, epi);
	return launch_status();
}

// Online softmax statistics (running max m, sum s of exp(x - m)), for
// row_two_pass: Inductor's online-softmax reduction.
struct online_t {
	float m, s;
};
__device__ __forceinline__ online_t shfl(online_t a, int o) { return online_t{shfl(a.m, o), shfl(a.s, o)}; }
struct online_softmax_op {
	typedef online_t acc_t;
	__device__ online_t ident() const { return online_t{-INFINITY, 0.f}; }
	__device__ online_t combine(online_t a, online_t b) const
	{
		float m = fmaxf(a.m, b.m);
		if (m == -INFINITY)
			return a;
		return online_t{m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
	}
	__device__ online_t reduce(online_t a, float x, long long) const { return combine(a, online_t{x, 1.f}); }
};

// Compiled column reduction: the partial kernel of eager.cuh with Inductor's
// split, then a combine kernel applying epi(acc, c).
template <typename A, typename To, typename Op, typename E>
__global__ void col_epi_kernel(const A *__restrict__ part, To *__restrict__ out, long long C, int splits,
			       Op op, E epi)
{
	long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= C)
		return;
	A a = part[c];
	for (int k = 1; k < splits; k++)
		a = op.combine(a, part[(long long)k * C + c]);
	out[c] = epi(a, c);
}

template <typename Ti, typename To, typename Op, typename E>
int fused_col_reduce(const Ti *x, To *out, long long R, long long C, Op op, E epi, void *ws, cudaStream_t s)
{
	typedef typename Op::acc_t A;
	long long gx = (C + 31) / 32, splits = (4 * 132 + gx - 1) / gx;
	long long max_split = (R + RED_ROWS - 1) / RED_ROWS;
	splits = splits > 64 ? 64 : splits;
	splits = splits > max_split ? max_split : splits;
	splits = splits < 1 ? 1 : splits;
	long long rows_per = (R + splits - 1) / splits;
	dim3 grid((unsigned)gx, (unsigned)splits), block(32, RED_ROWS);
	col_partial_kernel<<<grid, block, 0, s>>>(x, (A *)ws, R, C, rows_per, op);
	col_epi_kernel<<<grid_for(C, 256), 256, 0, s>>>((const A *)ws, out, C, (int)splits, op, epi);
	return launch_status();
}

// y[b, n, m] = x[b, m, n] for x [B, M, N]: Triton's tiled pointwise kernel
// for a copy whose load and store orders differ (YBLOCK = XBLOCK = 64,
// num_warps = 8): the 64 x 64 tile read with 16-byte vectors along x's rows,
// its layout converted through shared memory, written with 16-byte vectors
// along y's rows. VEC false (a row length not a multiple of the vector, or
// misaligned pointers): one element at a time, same tiles.
// The 16 bytes of v as a uint4 (4- or 2-byte elements), word by word.
template <typename T, int V> __device__ __forceinline__ uint4 pack16(const vec_t<T, V> &v)
{
	static_assert(sizeof(T) * V == 16 && (sizeof(T) == 4 || sizeof(T) == 2), "16 bytes of 2- or 4-byte elements");
	unsigned w[4];
#pragma unroll
	for (int i = 0; i < 4; i++) {
		if constexpr (sizeof(T) == 4) {
			memcpy(&w[i], &v.v[i], 4);
		} else {
			unsigned short lo, hi;
			memcpy(&lo, &v.v[2 * i], 2);
			memcpy(&hi, &v.v[2 * i + 1], 2);
			w[i] = lo | (unsigned)hi << 16;
		}
	}
	return make_uint4(w[0], w[1], w[2], w[3]);
}

static const int TT = 64;	  // tile edge
static const int TT_THREADS = 256; // num_warps = 8
template <bool VEC, typename T>
__global__ void __launch_bounds__(TT_THREADS)
tiled_transpose_kernel(const T *__restrict__ x, T *__restrict__ y, long long M, long long N)
{
	constexpr int V = VEC ? 16 / sizeof(T) : 1, TPR = TT / V, RPP = TT_THREADS / TPR;
	__shared__ T tile[TT][TT + 1];
	long long b = blockIdx.z, m0 = (long long)blockIdx.y * TT, n0 = (long long)blockIdx.x * TT;
	const T *xb = x + b * M * N;
	T *yb = y + b * M * N;
	int cg = (threadIdx.x % TPR) * V;
	for (int k = threadIdx.x / TPR; k < TT; k += RPP) {
		long long m = m0 + k, n = n0 + cg;
		vec_t<T, V> v;
		if (m < M && n + V <= N)
			v = *reinterpret_cast<const vec_t<T, V> *>(xb + m * N + n);
		else
			for (int j = 0; j < V; j++)
				v.v[j] = m < M && n + j < N ? xb[m * N + n + j] : T();
#pragma unroll
		for (int j = 0; j < V; j++)
			tile[k][cg + j] = v.v[j];
	}
	__syncthreads();
	for (int k = threadIdx.x / TPR; k < TT; k += RPP) {
		long long n = n0 + k, m = m0 + cg;
		vec_t<T, V> v;
#pragma unroll
		for (int j = 0; j < V; j++)
			v.v[j] = tile[cg + j][k];
		if constexpr (VEC) {
			// M and N are multiples of V here: a vector is all in or all
			// out. One 16-byte store, its words built explicitly: stored
			// as a vec_t of elements gathered from shared memory beside a
			// scalar tail loop, nvcc 13.0 split it into V scalar stores
			// (V times the L2 write requests: transpose_2d and
			// permute_3d at 1.16 and 2.09 of torch.compile).
			if (n < N && m < M)
				__stwb(reinterpret_cast<uint4 *>(yb + n * M + m), pack16(v));
		} else {
			if (n < N && m < M)
				yb[n * M + m] = v.v[0];
		}
	}
}

template <typename T> int tiled_transpose(const T *x, T *y, long long B, long long M, long long N, cudaStream_t s)
{
	constexpr int V = 16 / sizeof(T);
	dim3 grid((unsigned)((N + TT - 1) / TT), (unsigned)((M + TT - 1) / TT), (unsigned)B);
	if (M % V == 0 && N % V == 0 && aligned16(x) && aligned16(y))
		tiled_transpose_kernel<true><<<grid, TT_THREADS, 0, s>>>(x, y, M, N);
	else
		tiled_transpose_kernel<false><<<grid, TT_THREADS, 0, s>>>(x, y, M, N);
	return launch_status();
}

// y[i] = f(i) for i in [0, n): the pointwise layout above (1024 elements
// per block, 8 per thread), stored as 16-byte vectors when y is aligned.
// SPAN: f also gives V consecutive outputs at once, f.template span<V>(i0)
// for i0 a multiple of V (n too), as vectors it loads whole: Triton's
// vector loads, where its analysis proves an operand's offsets contiguous
// and 16-byte aligned over a thread's V elements (generate_spans).
template <int V, bool SPAN, typename To, typename F>
__global__ void __launch_bounds__(PW_THREADS) generate_kernel(To *__restrict__ y, long long n, F f)
{
	long long b0 = (long long)blockIdx.x * PW_BLOCK;
#pragma unroll
	for (int g = 0; g < PW_BLOCK / (PW_THREADS * V); g++) {
		long long i0 = b0 + ((long long)g * PW_THREADS + threadIdx.x) * V;
		if (i0 + V <= n) {
			vec_t<To, V> r;
			if constexpr (SPAN) {
				r = f.template span<V>(i0);
			} else {
#pragma unroll
				for (int j = 0; j < V; j++)
					r.v[j] = f(i0 + j);
			}
			*reinterpret_cast<vec_t<To, V> *>(y + i0) = r;
		} else {
			for (long long i = i0; i < n && i < i0 + V; i++)
				y[i] = f(i);
		}
	}
}

template <typename To, typename F> int generate(To *y, long long n, F f, cudaStream_t s)
{
	constexpr int V = 16 / sizeof(To) < 8 ? 16 / sizeof(To) : 8;
	if (aligned16(y))
		generate_kernel<V, false><<<grid_for(n, PW_BLOCK), PW_THREADS, 0, s>>>(y, n, f);
	else
		generate_kernel<1, false><<<grid_for(n, PW_BLOCK), PW_THREADS, 0, s>>>(y, n, f);
	return launch_status();
}

// generate with f.template span<V> where `spans` (the caller's proof that
// every V-aligned run of V outputs has its operands' V values contiguous and
// 16-byte aligned) holds and y is aligned; f(i) alone otherwise.
template <typename To, typename F> int generate_spans(To *y, long long n, F f, bool spans, cudaStream_t s)
{
	constexpr int V = 16 / sizeof(To) < 8 ? 16 / sizeof(To) : 8;
	if (!spans || !aligned16(y) || n % V)
		return generate(y, n, f, s);
	generate_kernel<V, true><<<grid_for(n, PW_BLOCK), PW_THREADS, 0, s>>>(y, n, f);
	return launch_status();
}

// y[idx[r], :] += src[r, :] for src [R, D] fp32, idx [R] int64 in [-V, V),
// y [V, D] (zeroed before): Inductor's kernel for index_add_ (decomposed to
// index_put_ with accumulate): the pointwise layout over the R x D source
// elements (1024 a block, 16-byte loads of src), the row by a constant
// division, its index loaded and a negative one wrapped, then the atomic add.
// V: 4 when D % 4 == 0 and src and y are aligned (a vector stays in a row);
// then, on sm_90, one 16-byte vector atomic a thread's 4 elements, as Triton
// lowers tl.atomic_add of 4 contiguous fp32 a thread there
// (atom.global.add.v4.f32: the destination's contiguity follows from the
// loaded index being constant over a row of D); elsewhere 4 scalar ones.
template <int VEC, typename I>
__global__ void __launch_bounds__(PW_THREADS)
scatter_add_rows_kernel(const float *__restrict__ src, const I *__restrict__ idx, float *__restrict__ y, long long n,
			fast_div D, long long V)
{
	long long b0 = (long long)blockIdx.x * PW_BLOCK;
#pragma unroll
	for (int g = 0; g < PW_BLOCK / (PW_THREADS * VEC); g++) {
		long long i0 = b0 + ((long long)g * PW_THREADS + threadIdx.x) * VEC;
		if (i0 >= n)
			continue;
		vec_t<float, VEC> v = *reinterpret_cast<const vec_t<float, VEC> *>(src + i0);
		long long r = D.div(i0), k = (long long)idx[r];
		float *dst = y + (k < 0 ? k + V : k) * D.d + (i0 - r * D.d);
#if __CUDA_ARCH__ >= 900
		constexpr bool v4 = VEC == 4;
#else
		constexpr bool v4 = false;
#endif
		if constexpr (v4)
			atomicAdd(reinterpret_cast<float4 *>(dst), make_float4(v.v[0], v.v[1], v.v[2], v.v[3]));
		else
#pragma unroll
			for (int j = 0; j < VEC; j++)
				atomicAdd(dst + j, v.v[j]);
	}
}

template <typename I>
int scatter_add_rows(const float *src, const I *idx, float *y, long long R, long long V, long long D, cudaStream_t s)
{
	long long n = R * D;
	fast_div d = make_fast_div(D, n);
	if (D % 4 == 0 && aligned16(src) && aligned16(y))
		scatter_add_rows_kernel<4><<<grid_for(n, PW_BLOCK), PW_THREADS, 0, s>>>(src, idx, y, n, d, V);
	else
		scatter_add_rows_kernel<1><<<grid_for(n, PW_BLOCK), PW_THREADS, 0, s>>>(src, idx, y, n, d, V);
	return launch_status();
}

// Inclusive prefix sum along the rows of x [R, C] fp32: one block per row,
// chunks of 4 x RD_THREADS elements (4 consecutive per thread, a float4
// when VEC), a warp-shuffle scan, the warp totals in shared memory, a carry
// from chunk to chunk.
template <bool VEC>
__global__ void __launch_bounds__(RD_THREADS)
block_scan_rows_kernel(const float *__restrict__ x, float *__restrict__ y, long long C)
{
	__shared__ float wsum[RD_THREADS / 32];
	const float *xr = x + (long long)blockIdx.x * C;
	float *yr = y + (long long)blockIdx.x * C;
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	float carry = 0.f;
	for (long long c0 = 0; c0 < C; c0 += 4 * RD_THREADS) {
		long long c = c0 + 4ll * threadIdx.x;
		float v[4];
		if (VEC && c + 3 < C) {
			float4 q = *reinterpret_cast<const float4 *>(xr + c);
			v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
		} else {
			for (int j = 0; j < 4; j++)
				v[j] = c + j < C ? xr[c + j] : 0.f;
		}
		v[1] += v[0], v[2] += v[1], v[3] += v[2];
		float s = v[3];
		for (int o = 1; o < 32; o <<= 1) {
			float u = __shfl_up_sync(0xffffffffu, s, o);
			s += lane >= o ? u : 0.f;
		}
		float ex = __shfl_up_sync(0xffffffffu, s, 1); // exclusive: the lanes before
		if (lane == 31)
			wsum[w] = s;
		__syncthreads();
		float off = carry + (lane ? ex : 0.f), total = 0.f;
		for (int k = 0; k < RD_THREADS / 32; k++) {
			off += k < w ? wsum[k] : 0.f;
			total += wsum[k];
		}
		for (int j = 0; j < 4; j++)
			if (c + j < C)
				yr[c + j] = off + v[j];
		carry += total;
		__syncthreads(); // wsum is rewritten by the next chunk
	}
}

static inline int block_scan_rows(const float *x, float *y, long long R, long long C, cudaStream_t s)
{
	if (C % 4 == 0 && aligned16(x))
		block_scan_rows_kernel<true><<<(unsigned)R, RD_THREADS, 0, s>>>(x, y, C);
	else
		block_scan_rows_kernel<false><<<(unsigned)R, RD_THREADS, 0, s>>>(x, y, C);
	return launch_status();
}

} // namespace ka

#endif
