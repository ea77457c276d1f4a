// bank/lib/eager.cuh: the kernels PyTorch eager launches, one per op, for the
// trusted eager baselines (a task's eager.cu is a short composition of these:
// one launch per PyTorch op, every intermediate a full tensor in memory).
//
// What each mirrors (ATen's CUDA kernels, described, not copied):
//   - unary / binary: TensorIterator's vectorized_elementwise_kernel on
//     contiguous tensors: 128-thread blocks, each thread one 16-byte vector
//     of the widest element type per step (float4 for fp32, 8 x fp16), a
//     grid-stride loop, a bounds-checked scalar tail; math in fp32 ("opmath")
//     for fp16/bf16. Pointers not 16-byte aligned fall back to one element
//     per step, as PyTorch's unrolled kernel does.
//   - binary_bcast_row: a binary op whose second operand is a [C] vector
//     broadcast over the rows (TensorIterator sees a stride-0 input and
//     cannot vectorize): elementwise_kernel<128, 4>, each thread 4 elements
//     128 apart, the column recomputed per element with a division.
//   - row_reduce: ATen's reduce_kernel<512, 1> when the reduced dimension is
//     the contiguous one, with its setReduceConfig: a warp (32 lanes) per
//     output row and 16 rows per block while a lane holds fewer than 256
//     values; from 256 (C > 8160) the block's 16 warps split one row and
//     combine in shared memory. One vector a thread an iteration (4 floats,
//     2 for Welford, as ATen's input_vec_size) in ATen's loop shape, which
//     nvcc does not unroll (one load in flight a thread), one accumulator a
//     vector lane, then a warp-shuffle tree; launch bounds (512, 4) as
//     reduce_kernel's. Ops are functors (sum, max, Welford, argmax).
//   - col_reduce: reduce_kernel when the reduced dimension is the outer one:
//     threads along the output columns (coalesced), 16 row slices per block
//     combined in shared memory, and when there are few columns the rows are
//     split over grid.y into a workspace that a second launch combines
//     (PyTorch does that second step in the same launch with a semaphore).
//   - gather_copy: a copy whose input is a permuted view (x.t().contiguous(),
//     permute(...).contiguous()): elementwise_kernel<128, 4> with an offset
//     calculator, reads strided, writes contiguous.
//   - index_select_rows: index_select / embedding forward: one thread per
//     output element, the index read per element.
//   - fill: a tensor set to a constant (zeros, new_zeros, fill_): the
//     vectorized elementwise kernel with no input.
//   - index_add_rows: index_add_ along dim 0 (indexFuncLargeIndex): one
//     thread per source element, grid-stride over min(n / 128, 8 x SMs)
//     blocks, 32-bit index math with three divisions an element (the slice,
//     and each side's TensorInfo offset), the index checked by a device
//     assert before the source element is read (as ATen's
//     CUDA_KERNEL_ASSERT), an atomicAdd per element (so the summation order
//     varies).
//   - unary_dyncast: a cast TensorIterator has no vectorized case for
//     (bf16 -> fp32): the unrolled kernel with runtime-dtype loads and stores.
//   - scatter_value_rows: out[n, idx[n]] = v, the scatter_ of one_hot: one
//     thread per index.
//   - topk_rows: torch.topk(x, K, dim=-1) for short rows (sbtopk::gatherTopK,
//     then sortKeyValueInplace): one block per row, a radix select of the
//     K-th largest value over order-preserving integer keys, 2 bits a pass
//     (16 passes over the row, digit counts in shared memory), the elements
//     above it and then enough equal to it written in index order (a block
//     prefix scan per chunk); a second launch sorts each row's K results
//     (value descending, equal values by index).
//   - cat2_cols: torch.cat([a, b], dim=-1) (CatArrayBatchedCopy): one
//     launch, grid.y picks the input, each thread copies elements of it to
//     their column offset in the output, the row and column by division.
//   - scan_rows: cumsum along the last dimension (ATen's
//     tensor_kernel_scan_innermost_dim): 512-thread blocks of tx lanes a row
//     (32 x 16 rows at 4096 x 8192), chunks of 2 tx elements in shared memory,
//     a Sklansky scan with a block barrier a level (its indices by shifts and
//     a mask, as ATen's), a running total.
// Every launch helper returns cudaGetLastError() == cudaSuccess ? 0 : -1.
// Trusted code: it runs natively in the runner. Keep it small and reviewed.
#ifndef KA_BANK_EAGER_CUH
#define KA_BANK_EAGER_CUH

#include <assert.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

namespace ka {

// ---- element types: load as float, store from float (PyTorch's opmath) ----
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v)
{
	return __float2bfloat16_rn(v);
}

template <typename T, int N> struct alignas(sizeof(T) * N) vec_t {
	T v[N];
};

static inline bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }
static inline int launch_status() { return cudaGetLastError() == cudaSuccess ? 0 : -1; }

static const int EW_THREADS = 128; // TensorIterator's num_threads()
static const int EW_WORK = 4;	   // thread_work_size() of the unrolled kernel

// Blocks for n work units of `per_block` each, capped (the loops grid-stride).
static inline unsigned grid_for(long long n, long long per_block)
{
	long long b = (n + per_block - 1) / per_block;
	return (unsigned)(b < 1 ? 1 : (b > (1ll << 30) ? (1ll << 30) : b));
}

// ---- elementwise ------------------------------------------------------------

// out[i] = f(in[i]) (f: float -> float), VEC elements per vector step.
template <int VEC, typename Ti, typename To, typename F>
__global__ void __launch_bounds__(EW_THREADS)
unary_kernel(const Ti *__restrict__ in, To *__restrict__ out, long long n, F f)
{
	long long nv = n / VEC, stride = (long long)gridDim.x * EW_THREADS;
	for (long long q = (long long)blockIdx.x * EW_THREADS + threadIdx.x; q < nv; q += stride) {
		vec_t<Ti, VEC> a = reinterpret_cast<const vec_t<Ti, VEC> *>(in)[q];
		vec_t<To, VEC> r;
#pragma unroll
		for (int j = 0; j < VEC; j++)
			r.v[j] = from_f<To>(f(to_f(a.v[j])));
		reinterpret_cast<vec_t<To, VEC> *>(out)[q] = r;
	}
	long long i = nv * VEC + (long long)blockIdx.x * EW_THREADS + threadIdx.x;
	for (; i < n; i += stride)
		out[i] = from_f<To>(f(to_f(in[i])));
}

template <typename Ti, typename To> constexpr int vec_of()
{
	return 16 / (sizeof(Ti) > sizeof(To) ? sizeof(Ti) : sizeof(To));
}

// One launch of out = f(in) over n elements (also a cast: f = identity).
template <typename Ti, typename To, typename F>
int unary(const Ti *in, To *out, long long n, F f, cudaStream_t s)
{
	constexpr int V = vec_of<Ti, To>();
	if (aligned16(in) && aligned16(out))
		unary_kernel<V><<<grid_for(n, (long long)EW_THREADS * V), EW_THREADS, 0, s>>>(in, out, n, f);
	else
		unary_kernel<1><<<grid_for(n, EW_THREADS * EW_WORK), EW_THREADS, 0, s>>>(in, out, n, f);
	return launch_status();
}

// ---- casts through TensorIterator's dynamic casting ---------------------------
// The copy of a dtype pair that direct_copy_kernel_cuda has no special case
// for (bf16 -> fp32 among them) runs unrolled_elementwise_kernel<f, 4> with
// LoadWithCast / StoreWithCast: 128 threads, 4 elements a thread 128 apart,
// every load and store a switch on the tensor's runtime dtype
// (fetch_and_cast, cast_and_store), all four loads before the stores.
enum dyn_t { DYN_U8, DYN_I8, DYN_I16, DYN_I32, DYN_I64, DYN_F16, DYN_F32, DYN_F64, DYN_BOOL, DYN_BF16 };
template <typename T> constexpr dyn_t dyn_of();
template <> constexpr dyn_t dyn_of<float>() { return DYN_F32; }
template <> constexpr dyn_t dyn_of<__half>() { return DYN_F16; }
template <> constexpr dyn_t dyn_of<__nv_bfloat16>() { return DYN_BF16; }

__device__ __forceinline__ float dyn_load(const char *p, int t, long long i)
{
	switch (t) {
	case DYN_U8: return (float)((const uint8_t *)p)[i];
	case DYN_I8: return (float)((const int8_t *)p)[i];
	case DYN_I16: return (float)((const int16_t *)p)[i];
	case DYN_I32: return (float)((const int32_t *)p)[i];
	case DYN_I64: return (float)((const int64_t *)p)[i];
	case DYN_F16: return __half2float(((const __half *)p)[i]);
	case DYN_F64: return (float)((const double *)p)[i];
	case DYN_BOOL: return ((const bool *)p)[i] ? 1.f : 0.f;
	case DYN_BF16: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
	default: return ((const float *)p)[i];
	}
}

__device__ __forceinline__ void dyn_store(char *p, int t, long long i, float v)
{
	switch (t) {
	case DYN_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case DYN_I8: ((int8_t *)p)[i] = (int8_t)v; break;
	case DYN_I16: ((int16_t *)p)[i] = (int16_t)v; break;
	case DYN_I32: ((int32_t *)p)[i] = (int32_t)v; break;
	case DYN_I64: ((int64_t *)p)[i] = (int64_t)v; break;
	case DYN_F16: ((__half *)p)[i] = __float2half_rn(v); break;
	case DYN_F64: ((double *)p)[i] = (double)v; break;
	case DYN_BOOL: ((bool *)p)[i] = v != 0.f; break;
	case DYN_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v); break;
	default: ((float *)p)[i] = v;
	}
}

template <typename F>
__global__ void __launch_bounds__(EW_THREADS)
dyncast_kernel(int n, const char *__restrict__ in, int ti, char *__restrict__ out, int to, F f)
{
	int base = blockIdx.x * EW_THREADS * EW_WORK + threadIdx.x, rem = n - blockIdx.x * EW_THREADS * EW_WORK;
	float v[EW_WORK];
#pragma unroll
	for (int j = 0; j < EW_WORK; j++)
		if (threadIdx.x + j * EW_THREADS < rem)
			v[j] = dyn_load(in, ti, base + j * EW_THREADS);
#pragma unroll
	for (int j = 0; j < EW_WORK; j++)
		if (threadIdx.x + j * EW_THREADS < rem)
			dyn_store(out, to, base + j * EW_THREADS, f(v[j]));
}

// out = f(in) with the dtypes known only at run time (n < 2^31, as ATen's
// 32-bit kernels; larger tensors are split there, not here).
template <typename Ti, typename To, typename F> int unary_dyncast(const Ti *in, To *out, long long n, F f, cudaStream_t s)
{
	if (n >= (1ll << 31))
		return -1;
	dyncast_kernel<<<grid_for(n, EW_THREADS * EW_WORK), EW_THREADS, 0, s>>>(
		(int)n, (const char *)in, (int)dyn_of<Ti>(), (char *)out, (int)dyn_of<To>(), f);
	return launch_status();
}

// out[i] = f(a[i], b[i]) over contiguous same-shape tensors.
template <int VEC, typename T, typename F>
__global__ void __launch_bounds__(EW_THREADS)
binary_kernel(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ out, long long n, F f)
{
	long long nv = n / VEC, stride = (long long)gridDim.x * EW_THREADS;
	for (long long q = (long long)blockIdx.x * EW_THREADS + threadIdx.x; q < nv; q += stride) {
		vec_t<T, VEC> x = reinterpret_cast<const vec_t<T, VEC> *>(a)[q];
		vec_t<T, VEC> y = reinterpret_cast<const vec_t<T, VEC> *>(b)[q], r;
#pragma unroll
		for (int j = 0; j < VEC; j++)
			r.v[j] = from_f<T>(f(to_f(x.v[j]), to_f(y.v[j])));
		reinterpret_cast<vec_t<T, VEC> *>(out)[q] = r;
	}
	long long i = nv * VEC + (long long)blockIdx.x * EW_THREADS + threadIdx.x;
	for (; i < n; i += stride)
		out[i] = from_f<T>(f(to_f(a[i]), to_f(b[i])));
}

template <typename T, typename F>
int binary(const T *a, const T *b, T *out, long long n, F f, cudaStream_t s)
{
	constexpr int V = 16 / sizeof(T);
	if (aligned16(a) && aligned16(b) && aligned16(out))
		binary_kernel<V><<<grid_for(n, (long long)EW_THREADS * V), EW_THREADS, 0, s>>>(a, b, out, n, f);
	else
		binary_kernel<1><<<grid_for(n, EW_THREADS * EW_WORK), EW_THREADS, 0, s>>>(a, b, out, n, f);
	return launch_status();
}

// out[r, c] = f(a[r, c], v[c]): the unrolled (non-vectorized) kernel.
template <typename T, typename F>
__global__ void __launch_bounds__(EW_THREADS)
bcast_row_kernel(const T *__restrict__ a, const T *__restrict__ v, T *__restrict__ out, long long n,
		 long long C, F f)
{
	long long base = (long long)blockIdx.x * EW_THREADS * EW_WORK + threadIdx.x;
#pragma unroll
	for (int j = 0; j < EW_WORK; j++) {
		long long i = base + (long long)j * EW_THREADS;
		if (i < n)
			out[i] = from_f<T>(f(to_f(a[i]), to_f(v[i % C])));
	}
}

template <typename T, typename F>
int binary_bcast_row(const T *a, const T *v, T *out, long long n, long long C, F f, cudaStream_t s)
{
	long long blocks = (n + EW_THREADS * EW_WORK - 1) / (EW_THREADS * EW_WORK);
	bcast_row_kernel<<<(unsigned)(blocks < 1 ? 1 : blocks), EW_THREADS, 0, s>>>(a, v, out, n, C, f);
	return launch_status();
}

// ---- reductions -------------------------------------------------------------
// An op has: acc_t; ident(); reduce(acc, x, index); combine(a, b) (a holds the
// lower indices); project(acc) -> output value. shfl() moves an acc_t.

__device__ __forceinline__ float shfl(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }

struct sum_op {
	typedef float acc_t;
	__device__ float ident() const { return 0.f; }
	__device__ float reduce(float a, float x, long long) const { return a + x; }
	__device__ float combine(float a, float b) const { return a + b; }
	__device__ float project(float a) const { return a * scale; }
	float scale; // 1 for sum, 1/C for mean
};
struct sumsq_op { // torch.linalg.vector_norm(ord=2): sqrt of the sum of squares
	typedef float acc_t;
	__device__ float ident() const { return 0.f; }
	__device__ float reduce(float a, float x, long long) const { return a + x * x; }
	__device__ float combine(float a, float b) const { return a + b; }
	__device__ float project(float a) const { return sqrtf(a); }
};
struct max_op { // NaN propagates as in torch.max/amax
	typedef float acc_t;
	__device__ float ident() const { return -INFINITY; }
	__device__ float reduce(float a, float x, long long) const { return (x != x || x > a) ? x : a; }
	__device__ float combine(float a, float b) const { return reduce(a, b, 0); }
	__device__ float project(float a) const { return a; }
};

// Welford's running (n, mean, m2), as ATen's WelfordOps; var = m2 / (n - corr).
struct welford_t {
	float n, mean, m2;
};
__device__ __forceinline__ welford_t shfl(welford_t w, int o)
{
	return welford_t{shfl(w.n, o), shfl(w.mean, o), shfl(w.m2, o)};
}
// Welford's update of a by x, the mean's increment d / n computed as
// div(d, n): the mirrored kernels differ only in that division (ATen's
// WelfordOps divides, its layer norm multiplies by 1 / n, Triton's `/` is
// div.full.f32).
template <typename Div> __device__ __forceinline__ welford_t welford_step(welford_t a, float x, Div div)
{
	float n = a.n + 1.f, d = x - a.mean, mean = a.mean + div(d, n);
	return welford_t{n, mean, a.m2 + d * (x - mean)};
}
struct var_op {
	typedef welford_t acc_t;
	__device__ welford_t ident() const { return welford_t{0.f, 0.f, 0.f}; }
	__device__ welford_t reduce(welford_t a, float x, long long) const
	{
		return welford_step(a, x, [](float d, float n) { return d / n; });
	}
	__device__ welford_t combine(welford_t a, welford_t b) const
	{
		if (a.n == 0.f)
			return b;
		if (b.n == 0.f)
			return a;
		float n = a.n + b.n, d = b.mean - a.mean, nb = b.n / n;
		return welford_t{n, a.mean + d * nb, a.m2 + b.m2 + d * d * a.n * nb};
	}
	__device__ float project(welford_t a) const { return a.m2 / fmaxf(a.n - correction, 0.f); }
	float correction; // 1: unbiased (torch.var default)
};

// (value, index) for argmax: the first index of the maximum, NaN counts as max.
struct argmax_t {
	float v;
	long long i;
};
__device__ __forceinline__ argmax_t shfl(argmax_t a, int o)
{
	return argmax_t{shfl(a.v, o), (long long)__shfl_xor_sync(0xffffffffu, a.i, o)};
}
struct argmax_op {
	typedef argmax_t acc_t;
	__device__ argmax_t ident() const { return argmax_t{-INFINITY, -1}; }
	__device__ bool better(argmax_t b, argmax_t a) const // b beats a?
	{
		if (a.i < 0)
			return true;
		if (b.i < 0)
			return false;
		bool an = a.v != a.v, bn = b.v != b.v;
		if (an || bn)
			return bn && (!an || b.i < a.i);
		return b.v > a.v || (b.v == a.v && b.i < a.i);
	}
	__device__ argmax_t reduce(argmax_t a, float x, long long i) const
	{
		argmax_t b{x, i};
		return better(b, a) ? b : a;
	}
	__device__ argmax_t combine(argmax_t a, argmax_t b) const { return better(b, a) ? b : a; }
	__device__ long long project(argmax_t a) const { return a.i; }
};

static const int RED_ROWS = 16; // warps per 512-thread block (reduce_kernel<512, 1>)

// ATen's input_vec_size (= vt0) of an op: 4, and 2 for Welford
// (std_var_kernel_impl lowers vt0 to 2 against register spills).
template <typename Op> struct red_vec {
	static const int v = 4;
};
template <> struct red_vec<var_op> {
	static const int v = 2;
};

// out[r] = op over x[r, 0:C], as reduce_kernel<512, 1> with ATen's config for
// a reduction along the contiguous dimension: 32 lanes split the row; the 16
// warps of a block take 16 rows (BLOCK_ROW false) or, once a lane would hold
// 256 values or more (C > 8160), all 16 split one row (BLOCK_ROW true) and
// combine through shared memory, one barrier a level (block_y_reduce). Each
// thread reads one VEC-wide vector an iteration into VEC accumulators, one a
// vector lane (input_vectorized_thread_reduce_impl), in ATen's loop form: a
// 32-bit index, the bound written as idx * VEC + VEC - 1 < end, and a plain
// (not restrict) input pointer. nvcc does not unroll that loop (nvcc 13.0's
// PTX: one vector load an iteration, so one load in flight per thread), where
// a 64-bit counted loop is unrolled four times with four loads in flight.
// Launch bounds as reduce_kernel's C10_LAUNCH_BOUNDS_2(512, 4).
template <int VEC, bool BLOCK_ROW, typename Ti, typename To, typename Op>
__global__ void __launch_bounds__(32 * RED_ROWS, 4)
row_reduce_kernel(const Ti *x, To *__restrict__ out, long long R, long long C, Op op)
{
	typedef typename Op::acc_t A;
	__shared__ A sm[RED_ROWS];
	long long r = BLOCK_ROW ? (long long)blockIdx.x : (long long)blockIdx.x * RED_ROWS + threadIdx.y;
	if (r >= R)
		return;
	const Ti *xr = x + r * C;
	int t = BLOCK_ROW ? threadIdx.y * 32 + threadIdx.x : threadIdx.x;
	int step = BLOCK_ROW ? 32 * RED_ROWS : 32;
	A acc[VEC];
#pragma unroll
	for (int j = 0; j < VEC; j++)
		acc[j] = op.ident();
	const unsigned end = (unsigned)C, stride = (unsigned)step;
	unsigned idx = (unsigned)t;
	while (idx * VEC + VEC - 1 < end) {
		vec_t<Ti, VEC> v = reinterpret_cast<const vec_t<Ti, VEC> *>(xr)[idx];
#pragma unroll
		for (int j = 0; j < VEC; j++)
			acc[j] = op.reduce(acc[j], to_f(v.v[j]), (long long)idx * VEC + j);
		idx += stride;
	}
	for (long long c = (long long)(end - end % VEC) + t; c < C; c += step)
		acc[0] = op.reduce(acc[0], to_f(xr[c]), c);
	// The accumulators cover interleaved index ranges; argmax's combine
	// breaks ties by index, so any combine order gives the first maximum.
	A a = acc[0];
#pragma unroll
	for (int j = 1; j < VEC; j++)
		a = op.combine(a, acc[j]);
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		a = op.combine(a, shfl(a, o));
	if (BLOCK_ROW) {
		if (threadIdx.x == 0)
			sm[threadIdx.y] = a;
		for (int o = RED_ROWS / 2; o > 0; o >>= 1) {
			__syncthreads();
			if (threadIdx.x == 0 && threadIdx.y < o) {
				a = op.combine(a, sm[threadIdx.y + o]);
				sm[threadIdx.y] = a;
			}
		}
		if (threadIdx.y != 0)
			return;
	}
	if (threadIdx.x == 0)
		out[r] = (To)op.project(a);
}

template <typename Ti, typename To, typename Op>
int row_reduce(const Ti *x, To *out, long long R, long long C, Op op, cudaStream_t s)
{
	dim3 block(32, RED_ROWS);
	constexpr int V = red_vec<Op>::v * sizeof(Ti) <= 16 ? red_vec<Op>::v : 16 / sizeof(Ti);
	bool vec = ((uintptr_t)x % (V * sizeof(Ti))) == 0 && C % V == 0;
	if ((C + 31) / 32 >= 256) { // ATen's max_values_per_thread: a block a row
		if (vec)
			row_reduce_kernel<V, true><<<(unsigned)R, block, 0, s>>>(x, out, R, C, op);
		else
			row_reduce_kernel<1, true><<<(unsigned)R, block, 0, s>>>(x, out, R, C, op);
		return launch_status();
	}
	unsigned grid = (unsigned)((R + RED_ROWS - 1) / RED_ROWS);
	if (vec)
		row_reduce_kernel<V, false><<<grid, block, 0, s>>>(x, out, R, C, op);
	else
		row_reduce_kernel<1, false><<<grid, block, 0, s>>>(x, out, R, C, op);
	return launch_status();
}

// Column reduction of x [R, C] over rows [r0, r1) into part[C] (acc_t).
template <typename Ti, typename Op>
__global__ void __launch_bounds__(32 * RED_ROWS)
col_partial_kernel(const Ti *__restrict__ x, typename Op::acc_t *__restrict__ part, long long R,
		   long long C, long long rows_per, Op op)
{
	typedef typename Op::acc_t A;
	__shared__ A sm[RED_ROWS][33];
	long long c = (long long)blockIdx.x * 32 + threadIdx.x;
	long long r0 = (long long)blockIdx.y * rows_per, r1 = min(R, r0 + rows_per);
	A a = op.ident();
	if (c < C)
		for (long long r = r0 + threadIdx.y; r < r1; r += RED_ROWS)
			a = op.reduce(a, to_f(x[r * C + c]), r);
	sm[threadIdx.y][threadIdx.x] = a;
	__syncthreads();
	if (threadIdx.y == 0 && c < C) {
		for (int k = 1; k < RED_ROWS; k++)
			a = op.combine(a, sm[k][threadIdx.x]);
		part[(long long)blockIdx.y * C + c] = a;
	}
}

template <typename A, typename To, typename Op>
__global__ void col_finish_kernel(const A *__restrict__ part, To *__restrict__ out, long long C,
				  int splits, Op op)
{
	long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= C)
		return;
	A a = part[c];
	for (int k = 1; k < splits; k++)
		a = op.combine(a, part[(long long)k * C + c]);
	out[c] = (To)op.project(a);
}

// out[c] = op over x[0:R, c]. ws: workspace of at least col_reduce_ws(C)
// bytes. Splits the rows over grid.y so that about 4 blocks per SM run.
template <typename Op> size_t col_reduce_ws(long long C) { return (size_t)C * 64 * sizeof(typename Op::acc_t); }
template <typename Ti, typename To, typename Op>
int col_reduce(const Ti *x, To *out, long long R, long long C, Op op, void *ws, cudaStream_t s)
{
	typedef typename Op::acc_t A;
	long long gx = (C + 31) / 32;
	long long splits = (4 * 132 + gx - 1) / gx;
	if (splits > 64)
		splits = 64;
	if (splits > (R + RED_ROWS - 1) / RED_ROWS)
		splits = (R + RED_ROWS - 1) / RED_ROWS;
	if (splits < 1)
		splits = 1;
	long long rows_per = (R + splits - 1) / splits;
	dim3 grid((unsigned)gx, (unsigned)splits), block(32, RED_ROWS);
	col_partial_kernel<<<grid, block, 0, s>>>(x, (A *)ws, R, C, rows_per, op);
	col_finish_kernel<<<grid_for(C, 256), 256, 0, s>>>((const A *)ws, out, C, (int)splits, op);
	return launch_status();
}

// ---- copies and index ops ---------------------------------------------------

// out (contiguous, logical shape d[0..2]) = in viewed with element strides
// st[0..2]: the copy behind .contiguous() of a transposed or permuted view.
template <typename T>
__global__ void __launch_bounds__(EW_THREADS)
strided_copy_kernel(const T *__restrict__ in, T *__restrict__ out, long long n, long long d1,
		    long long d2, long long s0, long long s1, long long s2)
{
	long long base = (long long)blockIdx.x * EW_THREADS * EW_WORK + threadIdx.x;
#pragma unroll
	for (int j = 0; j < EW_WORK; j++) {
		long long i = base + (long long)j * EW_THREADS;
		if (i < n) {
			long long i2 = i % d2, t = i / d2, i1 = t % d1, i0 = t / d1;
			out[i] = in[i0 * s0 + i1 * s1 + i2 * s2];
		}
	}
}

template <typename T>
int strided_copy(const T *in, T *out, const long long d[3], const long long st[3], cudaStream_t s)
{
	long long n = d[0] * d[1] * d[2];
	long long blocks = (n + EW_THREADS * EW_WORK - 1) / (EW_THREADS * EW_WORK);
	strided_copy_kernel<<<(unsigned)(blocks < 1 ? 1 : blocks), EW_THREADS, 0, s>>>(
		in, out, n, d[1], d[2], st[0], st[1], st[2]);
	return launch_status();
}

// out[t, :] = w[idx[t], :] for idx [T], w [V, D], out [T, D]. X: the type
// of the element index arithmetic (ATen uses 32-bit math where the sizes
// allow: canUse32BitIndexMath).
template <typename X, typename T, typename I>
__global__ void __launch_bounds__(EW_THREADS)
index_select_kernel(const T *__restrict__ w, const I *__restrict__ idx, T *__restrict__ out, X n, X D)
{
	X stride = (X)gridDim.x * EW_THREADS;
	for (X i = (X)blockIdx.x * EW_THREADS + threadIdx.x; i < n; i += stride)
		out[i] = w[(long long)idx[i / D] * D + i % D];
}

template <typename T, typename I>
int index_select_rows(const T *w, const I *idx, T *out, long long Tn, long long D, cudaStream_t s)
{
	long long n = Tn * D;
	unsigned g = grid_for(n, EW_THREADS * EW_WORK);
	if (n + (long long)g * EW_THREADS < (1ll << 31))
		index_select_kernel<int><<<g, EW_THREADS, 0, s>>>(w, idx, out, (int)n, (int)D);
	else
		index_select_kernel<long long><<<g, EW_THREADS, 0, s>>>(w, idx, out, n, D);
	return launch_status();
}

// out[i] = v for i in [0, n): vectors of 16 bytes, grid-stride.
template <int VEC, typename T>
__global__ void __launch_bounds__(EW_THREADS) fill_kernel(T *__restrict__ out, long long n, T v)
{
	long long nv = n / VEC, stride = (long long)gridDim.x * EW_THREADS;
	vec_t<T, VEC> r;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		r.v[j] = v;
	for (long long q = (long long)blockIdx.x * EW_THREADS + threadIdx.x; q < nv; q += stride)
		reinterpret_cast<vec_t<T, VEC> *>(out)[q] = r;
	for (long long i = nv * VEC + (long long)blockIdx.x * EW_THREADS + threadIdx.x; i < n; i += stride)
		out[i] = v;
}

template <typename T> int fill(T *out, long long n, T v, cudaStream_t s)
{
	constexpr int V = 16 / sizeof(T);
	if (aligned16(out))
		fill_kernel<V><<<grid_for(n, (long long)EW_THREADS * V), EW_THREADS, 0, s>>>(out, n, v);
	else
		fill_kernel<1><<<grid_for(n, EW_THREADS * EW_WORK), EW_THREADS, 0, s>>>(out, n, v);
	return launch_status();
}

// A 2-D tensor's geometry as ATen's TensorInfo holds it after reduceDim of
// the indexed dimension 0: size and stride of dim 1, the stride of dim 0.
template <typename X> struct info2 {
	X size1, stride1, stride0;
	// IndexToOffset<2>::get: the offset of element e of a slice.
	__device__ __forceinline__ X offset(X e) const { return e % size1 * stride1 + e / size1 * stride0; }
};

// out[idx[n], :] += alpha * src[n, :] for idx [N], src [N, D], out [V, D]:
// ATen's indexFuncLargeIndex<.., 2, 2, -2, IndexIsMajor = true>: a
// grid-stride loop over the source elements in index type X (32-bit where
// the sizes allow), the slice and element by division, the index loaded and
// checked by a device assert (CUDA_KERNEL_ASSERT(dstIndex < dstAddDimSize),
// active in PyTorch's release builds) before the source element is read, so
// that read waits for the index (the compiler does not move a load above the
// branch to __assertfail: two memory latencies in a row per element), each
// side's offset from its own TensorInfo (two more divisions), an atomicAdd.
template <typename X, typename I>
__global__ void __launch_bounds__(EW_THREADS)
index_add_kernel(const float *src, const I *idx, float *out, X total, X inner, X rows, info2<X> dst, info2<X> sr,
		 float alpha)
{
	for (X li = (X)blockIdx.x * blockDim.x + threadIdx.x; li < total; li += (X)gridDim.x * blockDim.x) {
		X si = li / inner, e = li % inner;
		X di = (X)idx[si];
		assert(di < rows);
		float v = src[sr.offset(e) + si * sr.stride0] * alpha;
		atomicAdd(out + dst.offset(e) + di * dst.stride0, v);
	}
}

template <typename I>
int index_add_rows(const float *src, const I *idx, float *out, long long N, long long V, long long D, cudaStream_t s)
{
	long long n = N * D, blocks = (n + EW_THREADS - 1) / EW_THREADS;
	blocks = blocks > 132 * 8 ? 132 * 8 : blocks < 1 ? 1 : blocks; // ATen: min(ceil(n / 128), 8 x SMs)
	if (n < (1ll << 31) && V * D < (1ll << 31)) { // canUse32BitIndexMath
		info2<unsigned> g{(unsigned)D, 1u, (unsigned)D};
		index_add_kernel<unsigned><<<(unsigned)blocks, EW_THREADS, 0, s>>>(src, idx, out, (unsigned)n, (unsigned)D,
										   (unsigned)V, g, g, 1.f);
	} else {
		info2<unsigned long long> g{(unsigned long long)D, 1ull, (unsigned long long)D};
		index_add_kernel<unsigned long long><<<(unsigned)blocks, EW_THREADS, 0, s>>>(
			src, idx, out, (unsigned long long)n, (unsigned long long)D, (unsigned long long)V, g, g, 1.f);
	}
	return launch_status();
}

// out[n * C + idx[n]] = v for n in [0, N).
template <typename T, typename I>
__global__ void __launch_bounds__(EW_THREADS)
scatter_value_kernel(const I *__restrict__ idx, T *__restrict__ out, long long N, long long C, T v)
{
	long long stride = (long long)gridDim.x * EW_THREADS;
	for (long long n = (long long)blockIdx.x * EW_THREADS + threadIdx.x; n < N; n += stride)
		out[n * C + (long long)idx[n]] = v;
}

template <typename T, typename I>
int scatter_value_rows(const I *idx, T *out, long long N, long long C, T v, cudaStream_t s)
{
	scatter_value_kernel<<<grid_for(N, EW_THREADS * EW_WORK), EW_THREADS, 0, s>>>(idx, out, N, C, v);
	return launch_status();
}

// out [R, Ca + Cb] = cat([a [R, Ca], b [R, Cb]], dim=-1). X: the index type
// (32-bit where the sizes allow, as ATen).
template <typename X, typename T>
__global__ void __launch_bounds__(EW_THREADS)
cat2_kernel(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ out, X R, X Ca, X Cb)
{
	const T *in = blockIdx.y ? b : a;
	X C = blockIdx.y ? Cb : Ca, off = blockIdx.y ? Ca : 0, n = R * C;
	X stride = (X)gridDim.x * EW_THREADS;
	for (X i = (X)blockIdx.x * EW_THREADS + threadIdx.x; i < n; i += stride)
		out[i / C * (Ca + Cb) + off + i % C] = in[i];
}

template <typename T>
int cat2_cols(const T *a, const T *b, T *out, long long R, long long Ca, long long Cb, cudaStream_t s)
{
	long long n = R * (Ca > Cb ? Ca : Cb);
	dim3 grid(grid_for(n, EW_THREADS * EW_WORK), 2);
	if (R * (Ca + Cb) + (long long)grid.x * EW_THREADS < (1ll << 31))
		cat2_kernel<int><<<grid, EW_THREADS, 0, s>>>(a, b, out, (int)R, (int)Ca, (int)Cb);
	else
		cat2_kernel<long long><<<grid, EW_THREADS, 0, s>>>(a, b, out, R, Ca, Cb);
	return launch_status();
}

// ---- top-k ---------------------------------------------------------------------

// float -> unsigned with the same order (larger float, larger key).
__device__ __forceinline__ unsigned topk_key(float f)
{
	unsigned u = __float_as_uint(f);
	return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Exclusive prefix count of flag over the block (blockDim.x a multiple of
// 32); *total gets the block's count. Uses sm[32].
__device__ __forceinline__ int block_excl_count(bool flag, int *sm, int *total)
{
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
	unsigned bal = __ballot_sync(0xffffffffu, flag);
	__syncthreads(); // sm may still be read by the previous call
	if (lane == 0)
		sm[w] = __popc(bal);
	__syncthreads();
	int before = __popc(bal & ((1u << lane) - 1u)), sum = 0;
	for (int k = 0; k < nw; k++) {
		before += k < w ? sm[k] : 0;
		sum += sm[k];
	}
	*total = sum;
	return before;
}

template <typename I>
__global__ void __launch_bounds__(1024)
topk_gather_kernel(const float *__restrict__ x, float *__restrict__ vals, I *__restrict__ idx, long long C, int K)
{
	__shared__ unsigned cnt[4];
	__shared__ int sm[32];
	const float *xr = x + (long long)blockIdx.x * C;
	unsigned desired = 0, mask = 0;
	int k = K; // how many of the remaining candidates are still wanted
	for (int pos = 30; pos >= 0; pos -= 2) {
		if (threadIdx.x < 4)
			cnt[threadIdx.x] = 0;
		__syncthreads();
		for (long long c = threadIdx.x; c < C; c += blockDim.x) {
			unsigned u = topk_key(xr[c]);
			if ((u & mask) == desired)
				atomicAdd(&cnt[(u >> pos) & 3], 1u);
		}
		__syncthreads();
		for (int d = 3; d >= 0; d--) { // the largest digit first
			if ((int)cnt[d] >= k) {
				desired |= (unsigned)d << pos;
				mask |= 3u << pos;
				break;
			}
			k -= (int)cnt[d];
		}
		__syncthreads();
	}
	// desired is the K-th largest key; k of the elements equal to it belong.
	int at = 0;
	for (int pass = 0; pass < 2; pass++)
		for (long long c0 = 0; c0 < C; c0 += blockDim.x) {
			long long c = c0 + threadIdx.x;
			unsigned u = c < C ? topk_key(xr[c]) : 0u;
			bool take = c < C && (pass ? u == desired : u > desired);
			int total, p = block_excl_count(take, sm, &total);
			if (take && (!pass || p < k)) {
				vals[(long long)blockIdx.x * K + at + p] = xr[c];
				idx[(long long)blockIdx.x * K + at + p] = (I)c;
			}
			at += pass ? (total < k ? total : k) : total;
			k -= pass ? (total < k ? total : k) : 0;
		}
}

// Each row's K (value, index) pairs sorted: value descending, index ascending.
template <typename I>
__global__ void topk_sort_kernel(float *__restrict__ vals, I *__restrict__ idx, long long R, int K)
{
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= R)
		return;
	float *v = vals + r * K;
	I *ix = idx + r * K;
	for (int i = 1; i < K; i++)
		for (int j = i; j > 0 && (v[j] > v[j - 1] || (v[j] == v[j - 1] && ix[j] < ix[j - 1])); j--) {
			float tv = v[j];
			v[j] = v[j - 1], v[j - 1] = tv;
			I ti = ix[j];
			ix[j] = ix[j - 1], ix[j - 1] = ti;
		}
}

template <typename I>
int topk_rows(const float *x, float *vals, I *idx, long long R, long long C, int K, cudaStream_t s)
{
	long long t = (C + 31) / 32 * 32;
	topk_gather_kernel<<<(unsigned)R, (unsigned)(t > 1024 ? 1024 : t), 0, s>>>(x, vals, idx, C, K);
	topk_sort_kernel<<<grid_for(R, 128), 128, 0, s>>>(vals, idx, R, K);
	return launch_status();
}

// Inclusive prefix sum along rows of x [R, C] (R, C < 2^32), as ATen's
// tensor_kernel_scan_innermost_dim: 512-thread blocks of 2^lx lanes a row by
// 512 / 2^lx rows (lx from scan_log_threads_x), each row scanned in chunks of
// 2^(lx + 1) elements held in shared memory, the running total added to a
// chunk's first element, then a Sklansky scan with a block barrier a level,
// its indices by shifts as ATen's (a = (tx >> m) << (m + 1) | s; tx % s with
// s = 1 << m, which the compiler makes a mask), the level count a kernel
// argument.
template <typename T>
__global__ void __launch_bounds__(512)
scan_rows_kernel(const T *x, T *y, unsigned R, unsigned C, unsigned lx)
{
	__shared__ float sbuf[2 * 512];
	const unsigned tx = threadIdx.x, nx = 1u << lx;
	float *buf = sbuf + 2 * nx * threadIdx.y;
	for (unsigned r0 = blockIdx.x * blockDim.y; r0 < R; r0 += blockDim.y * gridDim.x) {
		unsigned r = r0 + threadIdx.y;
		bool live = r < R;
		const T *xr = x + (size_t)r * C;
		T *yr = y + (size_t)r * C;
		float total = 0.f;
		for (unsigned c0 = 0; c0 < C; c0 += 2 * nx) {
			unsigned c1 = c0 + tx, c2 = c0 + nx + tx;
			if (live) {
				buf[tx] = c1 < C ? to_f(xr[c1]) : 0.f;
				buf[nx + tx] = c2 < C ? to_f(xr[c2]) : 0.f;
				if (tx == 0)
					buf[0] = buf[0] + total;
			}
			__syncthreads();
			for (unsigned m = 0; m <= lx; m++) {
				if (live) {
					unsigned st = 1u << m, a = ((tx >> m) << (m + 1)) | st;
					buf[a + tx % st] = buf[a + tx % st] + buf[a - 1];
				}
				__syncthreads();
			}
			if (live && c1 < C)
				yr[c1] = from_f<T>(buf[tx]);
			if (live && c2 < C)
				yr[c2] = from_f<T>(buf[nx + tx]);
			total = buf[2 * nx - 1];
			__syncthreads();
		}
	}
}

// ATen's get_log_num_threads_x_inner_scan<uint32_t>: log2 of the lanes a
// row, keeping about the ratio of the row length to the row count, 4 to 9.
// In unsigned arithmetic as ATen's: a row count past 2^(9 + log2 C) wraps
// the difference and clamps to 9.
static inline unsigned scan_log_threads_x(long long R, long long C)
{
	unsigned lx = 0, ly = 0;
	while ((1ull << lx) < (unsigned long long)C)
		lx++;
	while ((1ull << ly) < (unsigned long long)R)
		ly++;
	lx = (9u + (lx - ly)) / 2u;
	return lx < 4 ? 4 : lx > 9 ? 9 : lx;
}

template <typename T> int scan_rows(const T *x, T *y, long long R, long long C, cudaStream_t s)
{
	unsigned lx = scan_log_threads_x(R, C);
	dim3 block(1u << lx, 512u >> lx);
	long long g = (R + block.y - 1) / block.y;
	scan_rows_kernel<<<(unsigned)(g > 0x7fffffff ? 0x7fffffff : g), block, 0, s>>>(x, y, (unsigned)R, (unsigned)C,
											  lx);
	return launch_status();
}

// ---- softmax ------------------------------------------------------------------
// torch.softmax(x, dim=-1) for fp32 rows: ATen's cunn_SoftMaxForwardSmem, a
// single kernel, one block per row of (C / 4 rounded up to a power of two,
// 32..1024) threads; the row is read once with float4 loads into shared memory
// (when it fits in 47 KiB and is 16-byte aligned), then block max, block sum of
// exp(x - max), and the write of exp(x - max) / sum. Longer rows read x three
// times from global memory.
template <bool IS_MAX> __device__ float block_allreduce(float v, float *red)
{
	for (int o = 16; o > 0; o >>= 1) {
		float u = shfl(v, o);
		v = IS_MAX ? fmaxf(v, u) : v + u;
	}
	int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
	__syncthreads(); // red[] may still be read by the previous reduction
	if (lane == 0)
		red[warp] = v;
	__syncthreads();
	v = lane < nw ? red[lane] : (IS_MAX ? -INFINITY : 0.f);
	for (int o = 16; o > 0; o >>= 1) {
		float u = shfl(v, o);
		v = IS_MAX ? fmaxf(v, u) : v + u;
	}
	return v;
}

template <bool SMEM>
__global__ void softmax_rows_kernel(const float *__restrict__ x, float *__restrict__ y, long long C)
{
	extern __shared__ float4 row4[];
	__shared__ float red[32];
	const float *xr = x + (long long)blockIdx.x * C;
	float *yr = y + (long long)blockIdx.x * C;
	float *row = reinterpret_cast<float *>(row4);
	float m = -INFINITY;
	if (SMEM) { // C % 4 == 0 and aligned: float4 loads into shared memory
		for (long long q = threadIdx.x; q < C / 4; q += blockDim.x) {
			float4 v = reinterpret_cast<const float4 *>(xr)[q];
			row4[q] = v;
			m = fmaxf(fmaxf(m, fmaxf(v.x, v.y)), fmaxf(v.z, v.w));
		}
	} else {
		for (long long c = threadIdx.x; c < C; c += blockDim.x)
			m = fmaxf(m, xr[c]);
	}
	m = block_allreduce<true>(m, red);
	float s = 0.f;
	for (long long c = threadIdx.x; c < C; c += blockDim.x)
		s += expf((SMEM ? row[c] : xr[c]) - m);
	s = block_allreduce<false>(s, red);
	for (long long c = threadIdx.x; c < C; c += blockDim.x)
		yr[c] = expf((SMEM ? row[c] : xr[c]) - m) / s;
}

static inline int softmax_rows(const float *x, float *y, long long R, long long C, cudaStream_t s)
{
	int threads = 32;
	while (threads < 1024 && threads * 4 < C)
		threads *= 2;
	size_t bytes = (size_t)C * sizeof(float);
	if (C % 4 == 0 && aligned16(x) && bytes <= 47 * 1024)
		softmax_rows_kernel<true><<<(unsigned)R, threads, bytes, s>>>(x, y, C);
	else
		softmax_rows_kernel<false><<<(unsigned)R, threads, 0, s>>>(x, y, C);
	return launch_status();
}

} // namespace ka

#endif
