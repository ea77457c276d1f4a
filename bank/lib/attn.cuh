// attn.cuh: baseline kernels for the L3 attention tasks, as PyTorch eager
// and torch.compile run the attention written out op by op (a task's
// baseline_torch, docs/task-format.md), in PyTorch 2.11's kernels
// (described, not copied):
//
//   s = torch.bmm(q, k.transpose(1, 2), out_dtype=torch.float32) * scale
//   s = s.masked_fill(mask, -inf)                  (causal / window tasks)
//   o = torch.bmm(torch.softmax(s, dim=-1).to(q.dtype), v)
//
// with k and v first expanded by repeat_interleave for grouped-query tasks.
// The scores are fp32 (the bmm's out_dtype), as PyTorch's fused kernels keep
// them; 16-bit scores put the baselines within 2x of, or over, the tolerance
// of the tasks with an S x S score matrix (tools/attn_precision.py). The
// probabilities feeding the second bmm are in the input dtype.
//
// Eager, one launch per op, every intermediate a full tensor from one
// ka_workspace block:
//   - bmm: cuBLAS strided batched GEMM (cublasGemmStridedBatchedEx, 16-bit
//     operands, CUBLAS_COMPUTE_32F, default math), fp32 or 16-bit out;
//   - `* scale`, the clone of masked_fill and `.to(dtype)`: TensorIterator's
//     vectorized elementwise kernel (ka::unary, eager.cuh);
//   - the mask tensor: the expression's aranges and comparisons (3 to 7
//     PyTorch launches over at most Sq x Skv bytes) as one launch;
//   - masked_fill_: the unrolled elementwise kernel (the mask is broadcast
//     over the heads, so TensorIterator cannot vectorize): 128 threads, 4
//     elements 128 apart, the mask offset by a 32-bit fast division;
//   - softmax (fp32 in and out): ATen's host_softmax dispatch: the warp
//     softmax (PersistentSoftmax.cuh: a warp a row, the row in registers,
//     scalar loads 32 apart, 128-thread blocks) for rows up to 2048,
//     cunn_SoftMaxForwardReg (a 1024-thread block a row, ceil(C / 1024) < 10
//     registers a thread) up to 9216, then the shared-memory and the plain
//     (three passes, float4) cunn_SoftMaxForward (eager.cuh, norm.cuh);
//   - repeat_interleave: x.unsqueeze(2).expand(...).clone(): the copy of a
//     broadcast view, the unrolled kernel with its offset calculator;
//   - rotary: mul by the broadcast table, neg of a slice (unrolled kernels),
//     cat (one launch), mul, add (vectorized).
// Compiled (what Inductor emits for the same expression): the two bmm stay
// cuBLAS calls (extern kernels: decompose_mem_bound_mm is off by default,
// and the bmm decomposition for M = 1 applies only under
// coordinate_descent_tuning), around ONE fused kernel for scale + mask +
// softmax + cast (softmax_fused below); repeat_interleave becomes a Triton
// copy kernel materialising the expanded k and v (an extern bmm needs a
// real buffer, and no stride describes the expand merged into the batch),
// rotary one fused pointwise kernel each for q and k.
//
// Numerics of every softmax here: fp32 math, masked scores -inf; a row with
// every score masked gives 0 in the compiled kernels and in the eager warp
// and register kernels (ATen and Inductor would give NaN; no task's mask
// masks a whole row; the long-row eager kernels of eager.cuh and norm.cuh
// serve only the unmasked decode rows).
// Trusted code: it runs natively in the runner, not through the recorder.
#ifndef KA_BANK_ATTN_CUH
#define KA_BANK_ATTN_CUH

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include "ka_kernel.h"
#include "norm.cuh"

namespace attn {

using ka::aligned16;
using ka::fast_div;
using ka::from_f;
using ka::make_fast_div;
using ka::to_f;
using ka::vec_t;

static const size_t CUBLAS_WS_BYTES = 32u << 20;
static const int UNROLL_THREADS = 128; // TensorIterator's unrolled kernel
static const int UNROLL_WORK = 4;      // elements a thread, 128 apart
using ka::LOG2E;

template <class T> struct cuda_type;
template <> struct cuda_type<__half> {
	static const cudaDataType_t value = CUDA_R_16F;
};
template <> struct cuda_type<__nv_bfloat16> {
	static const cudaDataType_t value = CUDA_R_16BF;
};
template <> struct cuda_type<float> {
	static const cudaDataType_t value = CUDA_R_32F;
};

// out[e] = f(e) for e < n: TensorIterator's unrolled kernel, PyTorch eager's
// launch for an op whose operands are not all contiguous (a broadcast or a
// strided view): 128 threads, 4 elements 128 apart a thread, the four
// values computed (their loads issued) before the four stores. f may read
// out[e] itself (an in-place op).
template <typename T, typename F>
__global__ void __launch_bounds__(UNROLL_THREADS) unrolled_kernel(T *out, long long n, F f)
{
	long long base = (long long)blockIdx.x * UNROLL_THREADS * UNROLL_WORK + threadIdx.x;
	T v[UNROLL_WORK];
#pragma unroll
	for (int j = 0; j < UNROLL_WORK; j++)
		if (base + (long long)j * UNROLL_THREADS < n)
			v[j] = f(base + (long long)j * UNROLL_THREADS);
#pragma unroll
	for (int j = 0; j < UNROLL_WORK; j++)
		if (base + (long long)j * UNROLL_THREADS < n)
			out[base + (long long)j * UNROLL_THREADS] = v[j];
}
template <typename T, typename F> static inline int unrolled(T *out, long long n, F f, cudaStream_t st)
{
	unrolled_kernel<<<ka::grid_for(n, (long long)UNROLL_THREADS * UNROLL_WORK), UNROLL_THREADS, 0, st>>>(out, n, f);
	return ka::launch_status();
}

// The scale as torch applies it: the Python float 1 / sqrt(D), rounded to
// fp32 by the fp32 multiply.
static inline float attn_scale(long long D) { return (float)(1.0 / sqrt((double)D)); }

// Bump allocator over one ka_workspace block: 256-byte aligned pieces.
struct arena {
	char *base;
	size_t used, cap;
	void *take(size_t bytes)
	{
		size_t b = (bytes + 255) / 256 * 256;
		if (!base || used + b > cap)
			return NULL;
		void *p = base + used;
		used += b;
		return p;
	}
};
// One workspace for the call: `bytes` of tensors plus cuBLAS's workspace
// when with_blas. Returns false when ka_workspace refuses.
static inline bool arena_open(arena *a, size_t bytes, bool with_blas)
{
	a->cap = bytes + 256 * 16 + (with_blas ? CUBLAS_WS_BYTES : 0);
	a->base = (char *)ka_workspace(a->cap);
	a->used = 0;
	return a->base != NULL;
}

// The cuBLAS handle (created on the first call, like PyTorch's per-device
// handle); each call sets the stream and a workspace from the arena.
static inline cublasHandle_t blas_handle(cudaStream_t stream, arena *ws)
{
	static cublasHandle_t h;
	if (!h) {
		if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
			return NULL;
		cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
	}
	void *w = ws->take(CUBLAS_WS_BYTES);
	if (!w || cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS ||
	    cublasSetWorkspace(h, w, CUBLAS_WS_BYTES) != CUBLAS_STATUS_SUCCESS)
		return NULL;
	return h;
}

// Row-major batched C[b] = A[b] @ op(B[b]) with A [M, K], B [N, K] when
// b_trans (q @ k^T) or [K, N] otherwise (p @ v); C [M, N]; fp32 compute,
// operands in T, output in TC (float: torch.bmm(..., out_dtype=float32)).
// Strides in elements between batches. Returns 0 or -1.
template <class T, class TC>
static inline int bgemm(cublasHandle_t h, bool b_trans, long long M, long long N, long long K,
			const T *A, long long sA, const T *B, long long sB, TC *C, long long sC,
			long long batch)
{
	const float one = 1.f, zero = 0.f;
	// Column-major view: C^T [N, M] = op(B)^T [N, K] * A^T [K, M].
	cudaDataType_t t = cuda_type<T>::value, tc = cuda_type<TC>::value;
	cublasStatus_t st = cublasGemmStridedBatchedEx(
		h, b_trans ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, B, t,
		b_trans ? (int)K : (int)N, sB, A, t, (int)K, sA, &zero, C, tc, (int)N, sC, (int)batch,
		CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
	return st == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

// Mask of attention scores [BH, Sq, Skv] for query i and key j: causal keeps
// j <= i + (Skv - Sq) (the diagonal aligned bottom-right when Sq < Skv, as
// for a query block at the end of the cache); window > 0 also drops
// j <= i - window (keys more than window - 1 behind). As a row's kept range
// [lo, hi]: key j is kept iff lo <= j <= hi.
struct mask_spec {
	bool causal;
	long long window;
	bool any() const { return causal || window > 0; }
};
struct key_range {
	long long lo, hi;
};
__host__ __device__ __forceinline__ key_range kept_keys(mask_spec mk, long long i, long long Sq, long long Skv)
{
	long long ii = i + (Skv - Sq);
	key_range r = {0, Skv - 1};
	if (mk.causal && ii < r.hi)
		r.hi = ii;
	if (mk.window > 0 && ii - mk.window + 1 > r.lo)
		r.lo = ii - mk.window + 1;
	return r;
}

// ---- eager: elementwise ------------------------------------------------------

struct mul_by { // s * scale (a Python float: an fp32 multiply)
	float s;
	__device__ float operator()(float x) const { return x * s; }
};
struct copy_f { // clone, .to(dtype): the value, rounded by the store
	__device__ float operator()(float x) const { return x; }
};

// m[i, j] = key j masked out for query i: the expression's bool mask
// [Sq, Skv] (its aranges and comparisons as one launch).
__global__ void __launch_bounds__(UNROLL_THREADS)
mask_tensor_kernel(bool *__restrict__ m, long long n, fast_div by_skv, long long Sq, mask_spec mk)
{
	long long e = (long long)blockIdx.x * UNROLL_THREADS + threadIdx.x;
	if (e >= n)
		return;
	long long i = by_skv.div(e), j = e - i * by_skv.d;
	key_range r = kept_keys(mk, i, Sq, by_skv.d);
	m[e] = j < r.lo || j > r.hi;
}

// x.masked_fill_(m, -inf) for x [BH, Sq, Skv] and m [Sq, Skv] broadcast over
// BH (the unrolled kernel; every element written).
struct masked_fill_f {
	const float *x;
	const bool *m;
	fast_div by_ss;
	__device__ float operator()(long long e) const { return m[by_ss.mod(e)] ? -INFINITY : x[e]; }
};

// The written-out s.masked_fill(mask, -inf): the mask tensor (into mbuf,
// Sq x Skv bytes), the clone of s (into out) and masked_fill_ on it.
static inline int eager_masked_fill(const float *s, float *out, bool *mbuf, long long BH, long long Sq,
				    long long Skv, mask_spec mk, cudaStream_t st)
{
	long long ss = Sq * Skv, n = BH * ss;
	mask_tensor_kernel<<<ka::grid_for(ss, UNROLL_THREADS), UNROLL_THREADS, 0, st>>>(
		mbuf, ss, make_fast_div(Skv, ss), Sq, mk);
	if (ka::unary(s, out, n, copy_f(), st))
		return -1;
	return unrolled(out, n, masked_fill_f{out, mbuf, make_fast_div(ss, n)}, st);
}

// ---- eager: softmax over rows, fp32 in and out (ATen's host_softmax) -------

// softmax_warp_forward: a warp (of min(32, 2^LOG2) lanes) a row of C <=
// 2^LOG2 elements, two rows a warp up to 128, the row in registers, scalar
// loads 32 apart, expf and a true division; 128-thread blocks.
template <int LOG2>
__global__ void __launch_bounds__(128) softmax_warp_kernel(const float *__restrict__ x, float *__restrict__ y, int rows, int C)
{
	constexpr int NP = 1 << LOG2;
	constexpr int WS = NP < 32 ? NP : 32;
	constexpr int IT = NP / WS;
	constexpr int WB = NP <= 128 ? 2 : 1;
	int first = (blockDim.y * blockIdx.x + threadIdx.y) * WB;
	int local = rows - first < WB ? rows - first : WB, lane = threadIdx.x;
	const float *src = x + (long long)first * C + lane;
	float *dst = y + (long long)first * C + lane;
	float e[WB][IT];
#pragma unroll
	for (int b = 0; b < WB; b++)
#pragma unroll
		for (int it = 0; it < IT; it++)
			e[b][it] = b < local && lane + it * WS < C ? src[(long long)b * C + it * WS] : -INFINITY;
	float m[WB], s[WB];
#pragma unroll
	for (int b = 0; b < WB; b++) {
		m[b] = e[b][0];
#pragma unroll
		for (int it = 1; it < IT; it++)
			m[b] = m[b] > e[b][it] ? m[b] : e[b][it];
#pragma unroll
		for (int o = WS / 2; o > 0; o /= 2) {
			float u = __shfl_xor_sync(0xffffffffu, m[b], o, WS);
			m[b] = m[b] > u ? m[b] : u;
		}
		float mm = m[b] == -INFINITY ? 0.f : m[b]; // a fully masked row: zeros
		s[b] = 0.f;
#pragma unroll
		for (int it = 0; it < IT; it++) {
			e[b][it] = expf(e[b][it] - mm);
			s[b] += e[b][it];
		}
#pragma unroll
		for (int o = WS / 2; o > 0; o /= 2)
			s[b] += __shfl_xor_sync(0xffffffffu, s[b], o, WS);
	}
#pragma unroll
	for (int b = 0; b < WB; b++)
		if (b < local)
#pragma unroll
			for (int it = 0; it < IT; it++)
				if (lane + it * WS < C)
					dst[(long long)b * C + it * WS] = s[b] > 0.f ? e[b][it] / s[b] : 0.f;
}

template <int LOG2> static inline void softmax_warp_launch(const float *x, float *y, long long rows, long long C, cudaStream_t st)
{
	constexpr int NP = 1 << LOG2, WS = NP < 32 ? NP : 32, WB = NP <= 128 ? 2 : 1;
	dim3 threads(WS, 128 / WS);
	long long per_block = (128 / WS) * WB;
	softmax_warp_kernel<LOG2><<<(unsigned)((rows + per_block - 1) / per_block), threads, 0, st>>>(x, y, (int)rows, (int)C);
}

// cunn_SoftMaxForwardReg<..., REG>: a block of 1024 threads a row, element
// tid + r * 1024 in register r < REG (3 to 9 for the rows that reach it),
// scalar loads, block max and sum, exp again at the store.
template <int REG>
__global__ void __launch_bounds__(1024) softmax_reg_kernel(const float *__restrict__ x, float *__restrict__ y, long long C)
{
	const float *xr = x + (long long)blockIdx.x * C;
	float *yr = y + (long long)blockIdx.x * C;
	float v[REG], m = -INFINITY, s = 0.f;
#pragma unroll
	for (int r = 0; r < REG; r++) {
		long long c = threadIdx.x + (long long)r * blockDim.x;
		if (c < C) {
			v[r] = xr[c];
			m = ka::max_op().reduce(m, v[r], c);
		}
	}
	m = ka::block_all(m, ka::max_op());
	float mm = m == -INFINITY ? 0.f : m; // a fully masked row: zeros
#pragma unroll
	for (int r = 0; r < REG; r++) {
		long long c = threadIdx.x + (long long)r * blockDim.x;
		if (c < C)
			s += expf(v[r] - mm);
	}
	s = ka::block_all(s, ka::sum_op{1.f});
#pragma unroll
	for (int r = 0; r < REG; r++) {
		long long c = threadIdx.x + (long long)r * blockDim.x;
		if (c < C)
			yr[c] = s > 0.f ? expf(v[r] - mm) / s : 0.f;
	}
}

// torch.softmax(x, dim=-1) for x [rows, C] fp32: the kernel host_softmax
// picks (the warp softmax launched over chunks of 2^30 / C rows, as ATen
// does to keep its int offsets in range).
static inline int eager_softmax(const float *x, float *y, long long rows, long long C, cudaStream_t st)
{
	if (C <= 2048) {
		int lg = 0;
		while ((1ll << lg) < C)
			lg++;
		long long chunk = (1ll << 30) / C;
		for (long long r0 = 0; r0 < rows; r0 += chunk) {
			long long r = rows - r0 < chunk ? rows - r0 : chunk;
			const float *xs = x + r0 * C;
			float *ys = y + r0 * C;
			switch (lg) {
			case 0: softmax_warp_launch<0>(xs, ys, r, C, st); break;
			case 1: softmax_warp_launch<1>(xs, ys, r, C, st); break;
			case 2: softmax_warp_launch<2>(xs, ys, r, C, st); break;
			case 3: softmax_warp_launch<3>(xs, ys, r, C, st); break;
			case 4: softmax_warp_launch<4>(xs, ys, r, C, st); break;
			case 5: softmax_warp_launch<5>(xs, ys, r, C, st); break;
			case 6: softmax_warp_launch<6>(xs, ys, r, C, st); break;
			case 7: softmax_warp_launch<7>(xs, ys, r, C, st); break;
			case 8: softmax_warp_launch<8>(xs, ys, r, C, st); break;
			case 9: softmax_warp_launch<9>(xs, ys, r, C, st); break;
			case 10: softmax_warp_launch<10>(xs, ys, r, C, st); break;
			default: softmax_warp_launch<11>(xs, ys, r, C, st); break;
			}
		}
		return ka::launch_status();
	}
	unsigned g = (unsigned)rows;
	switch ((C + 1023) / 1024) { // C > 2048 here: 3 registers or more
	case 3: softmax_reg_kernel<3><<<g, 1024, 0, st>>>(x, y, C); return ka::launch_status();
	case 4: softmax_reg_kernel<4><<<g, 1024, 0, st>>>(x, y, C); return ka::launch_status();
	case 5: softmax_reg_kernel<5><<<g, 1024, 0, st>>>(x, y, C); return ka::launch_status();
	case 6: softmax_reg_kernel<6><<<g, 1024, 0, st>>>(x, y, C); return ka::launch_status();
	case 7: softmax_reg_kernel<7><<<g, 1024, 0, st>>>(x, y, C); return ka::launch_status();
	case 8: softmax_reg_kernel<8><<<g, 1024, 0, st>>>(x, y, C); return ka::launch_status();
	case 9: softmax_reg_kernel<9><<<g, 1024, 0, st>>>(x, y, C); return ka::launch_status();
	default: break;
	}
	if (C % 4 == 0 && aligned16(x) && C * 4 <= 47 * 1024)
		return ka::softmax_rows(x, y, rows, C, st);
	return ka::softmax_fwd<false>(x, y, rows, C, st);
}

// ---- compiled: scale + mask + softmax + cast as one kernel ---------------------

// Inductor's fused reduction for torch.softmax(bmm(...) * scale masked to
// -inf, -1).to(TO) over rows of C fp32 scores, in its launch configuration
// for an inner reduction: one row a program (XBLOCK = 1), num_warps = 8
// (256 threads), fp32 math. Up to 1024 (its persistent-reduction limit) the
// row is held in registers and read once: a 16-byte vector of four scores a
// thread, all loads issued first. Longer rows are a looped reduction over
// RBLOCK = 2048 chunks (two vectors a thread an iteration); with no mask,
// three loops (softmax_looped3_kernel), else an online pass
// keeping a running (max, sum of exp) per element slot (two exp an
// element), the slots combined and the block by shuffle trees
// (ka::block_all_tree, as Triton reduces across warps), then a second read (mostly
// from L2) writing the probabilities. The mask comes from the row's kept key
// range (an index comparison, no mask tensor); exp is Triton's lowering,
// exp2((x - m) * log2 e) (ex2.approx); the probabilities are stored as
// 8-byte vectors of four 16-bit values. V = 1 serves rows that are not a
// multiple of 4 or misaligned scores.
static const int SF_THREADS = 256;  // num_warps = 8
static const int SF_PERSIST = 1024; // persistent reduction up to this row length
static const int SF_RBLOCK = 2048;  // a looped reduction's chunk

// This block's row of x and y and its kept keys [lo, hi] (C < 2^31).
struct sf_row {
	const float *x;
	long long off;
	int lo, hi;
};
__device__ __forceinline__ sf_row sf_row_of(const float *x, long long C, fast_div by_sq, mask_spec mk)
{
	key_range kr = kept_keys(mk, by_sq.mod(blockIdx.x), by_sq.d, C);
	sf_row r = {x + (long long)blockIdx.x * C, (long long)blockIdx.x * C, (int)kr.lo,
		    (int)(kr.hi < C - 1 ? kr.hi : C - 1)};
	return r;
}

// Persistent: PER vectors of V scores a thread, PER * V * 256 >= C.
template <int V, int PER, typename TO>
__global__ void __launch_bounds__(SF_THREADS)
softmax_persistent_kernel(const float *__restrict__ x, TO *__restrict__ y, long long C, fast_div by_sq, float scale,
			  mask_spec mk)
{
	sf_row r = sf_row_of(x, C, by_sq, mk);
	const vec_t<float, V> *xr = reinterpret_cast<const vec_t<float, V> *>(r.x);
	int nv = (int)(C / V);
	vec_t<float, V> v[PER];
#pragma unroll
	for (int k = 0; k < PER; k++) {
		int q = threadIdx.x + k * SF_THREADS;
		if (q < nv)
			v[k] = xr[q];
		else
			v[k] = vec_t<float, V>{};
	}
	float m = -INFINITY, s = 0.f;
#pragma unroll
	for (int k = 0; k < PER; k++)
#pragma unroll
		for (int j = 0; j < V; j++) {
			int c = (threadIdx.x + k * SF_THREADS) * V + j;
			v[k].v[j] = c >= r.lo && c <= r.hi ? v[k].v[j] * scale : -INFINITY;
			m = fmaxf(m, v[k].v[j]);
		}
	m = ka::block_all_tree(m, ka::max_op());
	float mm = m == -INFINITY ? 0.f : m; // a fully masked row: zeros
#pragma unroll
	for (int k = 0; k < PER; k++)
#pragma unroll
		for (int j = 0; j < V; j++) {
			v[k].v[j] = exp2f((v[k].v[j] - mm) * LOG2E);
			s += v[k].v[j];
		}
	s = ka::block_all_tree(s, ka::sum_op{1.f});
	float inv = s > 0.f ? 1.f / s : 0.f;
	vec_t<TO, V> *yr = reinterpret_cast<vec_t<TO, V> *>(y + r.off);
#pragma unroll
	for (int k = 0; k < PER; k++) {
		int q = threadIdx.x + k * SF_THREADS;
		if (q < nv) {
			vec_t<TO, V> o;
#pragma unroll
			for (int j = 0; j < V; j++)
				o.v[j] = from_f<TO>(v[k].v[j] * inv);
			yr[q] = o;
		}
	}
}

// The U vectors of a looped iteration from q0, 256 apart (those below nv),
// all loads issued before any use.
template <int V, int U>
__device__ __forceinline__ void sf_chunk(const vec_t<float, V> *__restrict__ xr, int q0, int nv, vec_t<float, V> v[U])
{
#pragma unroll
	for (int u = 0; u < U; u++)
		if (q0 + u * SF_THREADS < nv)
			v[u] = xr[q0 + u * SF_THREADS];
}

// Looped: U = RBLOCK / (256 V) vectors a thread an iteration.
template <int V, typename TO>
__global__ void __launch_bounds__(SF_THREADS)
softmax_looped_kernel(const float *__restrict__ x, TO *__restrict__ y, long long C, fast_div by_sq, float scale,
		      mask_spec mk)
{
	constexpr int U = SF_RBLOCK / (SF_THREADS * V);
	sf_row r = sf_row_of(x, C, by_sq, mk);
	const vec_t<float, V> *xr = reinterpret_cast<const vec_t<float, V> *>(r.x);
	int nv = (int)(C / V);
	float m[U * V], s[U * V];
#pragma unroll
	for (int k = 0; k < U * V; k++)
		m[k] = -INFINITY, s[k] = 0.f;
	for (int q0 = threadIdx.x; q0 < nv; q0 += U * SF_THREADS) {
		vec_t<float, V> v[U];
		sf_chunk<V, U>(xr, q0, nv, v);
#pragma unroll
		for (int u = 0; u < U; u++)
#pragma unroll
			for (int j = 0; j < V; j++) {
				int c = (q0 + u * SF_THREADS) * V + j, k = u * V + j;
				if (q0 + u * SF_THREADS < nv && c >= r.lo && c <= r.hi) { // a finite score
					float t = v[u].v[j] * scale, mn = fmaxf(m[k], t);
					s[k] = s[k] * exp2f((m[k] - mn) * LOG2E) + exp2f((t - mn) * LOG2E);
					m[k] = mn;
				}
			}
	}
	ka::online_softmax_op op;
	ka::online_t a = {m[0], s[0]};
#pragma unroll
	for (int k = 1; k < U * V; k++)
		a = op.combine(a, ka::online_t{m[k], s[k]});
	a = ka::block_all_tree(a, op);
	float mm = a.m == -INFINITY ? 0.f : a.m, inv = a.s > 0.f ? 1.f / a.s : 0.f;
	vec_t<TO, V> *yr = reinterpret_cast<vec_t<TO, V> *>(y + r.off);
	for (int q0 = threadIdx.x; q0 < nv; q0 += U * SF_THREADS) {
		vec_t<float, V> v[U];
		sf_chunk<V, U>(xr, q0, nv, v);
#pragma unroll
		for (int u = 0; u < U; u++) {
			if (q0 + u * SF_THREADS >= nv)
				continue;
			vec_t<TO, V> o;
#pragma unroll
			for (int j = 0; j < V; j++) {
				int c = (q0 + u * SF_THREADS) * V + j;
				float p = c >= r.lo && c <= r.hi ? exp2f((v[u].v[j] * scale - mm) * LOG2E) : 0.f;
				o.v[j] = from_f<TO>(p * inv);
			}
			yr[q0 + u * SF_THREADS] = o;
		}
	}
}

// Looped with no mask, as Inductor emits it for bmm * scale, softmax, .to()
// (triton_red_fused__softmax__to_copy_amax_mul_sub: no online softmax,
// tools/torch_kernels.py --launches on the H200): a max loop, a loop
// summing exp(x - max), then the write loop, the two later ones reading the
// row again (mostly from L2): two exp an element in all, where the online
// pass takes three.
template <int V, typename TO>
__global__ void __launch_bounds__(SF_THREADS)
softmax_looped3_kernel(const float *__restrict__ x, TO *__restrict__ y, long long C, float scale)
{
	constexpr int U = SF_RBLOCK / (SF_THREADS * V);
	typedef vec_t<float, V> VF;
	const VF *xr = reinterpret_cast<const VF *>(x + (long long)blockIdx.x * C);
	vec_t<TO, V> *yr = reinterpret_cast<vec_t<TO, V> *>(y + (long long)blockIdx.x * C);
	long long nv = C / V;
	float m = -INFINITY, s = 0.f;
	ka::row_vectors<U>(xr, nv, [&](const VF &v, long long) {
#pragma unroll
		for (int j = 0; j < V; j++)
			m = ka::max_op().reduce(m, v.v[j] * scale, 0);
	});
	m = ka::block_all_tree(m, ka::max_op());
	ka::row_vectors<U>(xr, nv, [&](const VF &v, long long) {
#pragma unroll
		for (int j = 0; j < V; j++)
			s += exp2f((v.v[j] * scale - m) * LOG2E);
	});
	s = ka::block_all_tree(s, ka::sum_op{1.f});
	float inv = 1.f / s;
	ka::row_vectors<U>(xr, nv, [&](const VF &v, long long q) {
		vec_t<TO, V> o;
#pragma unroll
		for (int j = 0; j < V; j++)
			o.v[j] = from_f<TO>(exp2f((v.v[j] * scale - m) * LOG2E) * inv);
		yr[q] = o;
	});
}

// y = softmax(mask(x * scale), -1).to(TO) over R rows of C; Sq: the queries
// a head (a row's query index is row % Sq).
template <typename TO>
static inline int softmax_fused(const float *x, TO *y, long long R, long long C, long long Sq, float scale, mask_spec mk,
				cudaStream_t st)
{
	fast_div by_sq = make_fast_div(Sq, R);
	bool vec = C % 4 == 0 && aligned16(x) && ((uintptr_t)y & 7) == 0;
	unsigned g = (unsigned)R;
	if (C <= SF_PERSIST && vec)
		softmax_persistent_kernel<4, 1, TO><<<g, SF_THREADS, 0, st>>>(x, y, C, by_sq, scale, mk);
	else if (C <= SF_PERSIST)
		softmax_persistent_kernel<1, 4, TO><<<g, SF_THREADS, 0, st>>>(x, y, C, by_sq, scale, mk);
	else if (vec && !mk.any())
		softmax_looped3_kernel<4, TO><<<g, SF_THREADS, 0, st>>>(x, y, C, scale);
	else if (vec)
		softmax_looped_kernel<4, TO><<<g, SF_THREADS, 0, st>>>(x, y, C, by_sq, scale, mk);
	else if (!mk.any())
		softmax_looped3_kernel<1, TO><<<g, SF_THREADS, 0, st>>>(x, y, C, scale);
	else
		softmax_looped_kernel<1, TO><<<g, SF_THREADS, 0, st>>>(x, y, C, by_sq, scale, mk);
	return ka::launch_status();
}

// ---- grouped-query expansion: repeat_interleave(G, dim=1) ------------------------

// out [BHkv, G, SD] from kv [BHkv, SD], each row of kv copied G times.
// Eager: ATen's copy of the broadcast view (the unrolled kernel, the source
// offset by two fast divisions an element, as its offset calculator).
template <typename T> struct repeat_f {
	const T *kv;
	fast_div by_sd, by_g;
	__device__ T operator()(long long e) const
	{
		long long t = by_sd.div(e);
		return kv[by_g.div(t) * by_sd.d + (e - t * by_sd.d)];
	}
};
// Compiled: Triton's pointwise copy (1024 elements a 128-thread block, a
// 16-byte vector a thread when SD is a multiple of V and both are aligned).
template <int V, typename T>
__global__ void __launch_bounds__(ka::PW_THREADS)
repeat_vec_kernel(const T *__restrict__ kv, T *__restrict__ out, long long n, fast_div by_sd, fast_div by_g)
{
	long long b0 = (long long)blockIdx.x * ka::PW_BLOCK;
#pragma unroll
	for (int g = 0; g < ka::PW_BLOCK / (ka::PW_THREADS * V); g++) {
		long long e = b0 + ((long long)g * ka::PW_THREADS + threadIdx.x) * V;
		if (e >= n)
			continue;
		long long t = by_sd.div(e);
		const T *src = kv + by_g.div(t) * by_sd.d + (e - t * by_sd.d);
		*reinterpret_cast<vec_t<T, V> *>(out + e) = *reinterpret_cast<const vec_t<T, V> *>(src);
	}
}
template <typename T>
static inline int repeat_heads(const T *kv, T *out, long long rows, long long G, long long SD, bool fused,
			       cudaStream_t st)
{
	constexpr int V = 16 / sizeof(T);
	long long n = rows * G * SD;
	fast_div by_sd = make_fast_div(SD, n), by_g = make_fast_div(G, n / SD + 1);
	if (!fused)
		return unrolled(out, n, repeat_f<T>{kv, by_sd, by_g}, st);
	if (SD % V == 0 && aligned16(kv) && aligned16(out))
		repeat_vec_kernel<V, T><<<ka::grid_for(n, ka::PW_BLOCK), ka::PW_THREADS, 0, st>>>(kv, out, n, by_sd, by_g);
	else
		repeat_vec_kernel<1, T><<<ka::grid_for(n, ka::PW_BLOCK), ka::PW_THREADS, 0, st>>>(kv, out, n, by_sd, by_g);
	return ka::launch_status();
}

// ---- rotary embedding (rotate_half), x [BH, S, D], tables cs, sn [S, D] ----------

// Eager, each op one launch: t1 = x * cs (the table broadcast over BH: the
// unrolled kernel), nh = -x[..., D/2:] (a strided slice: unrolled), r =
// cat(nh, x[..., :D/2]) (one launch over both inputs), r = r * sn, out =
// t1 + r (contiguous: vectorized).
template <typename T> struct mul_table_f { // x[e] * tab[e % (S * D)]
	const T *x, *tab;
	fast_div by_sd;
	__device__ T operator()(long long e) const { return from_f<T>(to_f(x[e]) * to_f(tab[by_sd.mod(e)])); }
};
template <typename T> struct neg_half_f { // e of [rows, D/2]: -x[row, D/2 + e % (D/2)]
	const T *x;
	fast_div by_half;
	__device__ T operator()(long long e) const
	{
		long long row = by_half.div(e);
		return from_f<T>(-to_f(x[row * 2 * by_half.d + by_half.d + (e - row * by_half.d)]));
	}
};
// o [rows, D] = cat(nh [rows, D/2], x[..., :D/2]) along the last dimension.
template <typename T>
__global__ void __launch_bounds__(UNROLL_THREADS)
cat_half_kernel(const T *__restrict__ nh, const T *__restrict__ x, T *__restrict__ o, long long n, fast_div by_d)
{
	long long e = (long long)blockIdx.x * UNROLL_THREADS + threadIdx.x;
	if (e >= n)
		return;
	long long row = by_d.div(e), d = e - row * by_d.d, h = by_d.d / 2;
	o[e] = d < h ? nh[row * h + d] : x[row * by_d.d + d - h];
}
struct add_f {
	__device__ float operator()(float a, float b) const { return a + b; }
};

// Eager rotary of x into out; tmp: 3 scratch tensors of n elements (n / 2
// for the second). Returns 0 or -1.
template <typename T>
static inline int rope_eager(const T *x, const T *cs, const T *sn, T *out, T *tmp[3], long long n, long long S,
			     long long D, cudaStream_t st)
{
	fast_div by_sd = make_fast_div(S * D, n), by_half = make_fast_div(D / 2, n / 2), by_d = make_fast_div(D, n);
	if (unrolled(tmp[0], n, mul_table_f<T>{x, cs, by_sd}, st) ||
	    unrolled(tmp[1], n / 2, neg_half_f<T>{x, by_half}, st))
		return -1;
	cat_half_kernel<T><<<ka::grid_for(n, UNROLL_THREADS), UNROLL_THREADS, 0, st>>>(tmp[1], x, tmp[2], n, by_d);
	if (unrolled(tmp[2], n, mul_table_f<T>{tmp[2], sn, by_sd}, st))
		return -1;
	return ka::binary(tmp[0], tmp[2], out, n, add_f(), st);
}

// Compiled: the whole rotary expression as one fused pointwise kernel, in
// fp32 and rounded once (as Inductor does): V elements a thread, all in one
// half of a row (D / 2 a multiple of V), 16-byte loads of x, its rotated
// partner and the two tables.
template <int V, typename T>
__global__ void __launch_bounds__(ka::PW_THREADS)
rope_fused_kernel(const T *__restrict__ x, const T *__restrict__ cs, const T *__restrict__ sn, T *__restrict__ o,
		  long long n, fast_div by_d, fast_div by_sd)
{
	long long b0 = (long long)blockIdx.x * ka::PW_BLOCK;
	long long h = by_d.d / 2;
#pragma unroll
	for (int g = 0; g < ka::PW_BLOCK / (ka::PW_THREADS * V); g++) {
		long long e = b0 + ((long long)g * ka::PW_THREADS + threadIdx.x) * V;
		if (e >= n)
			continue;
		long long d = by_d.mod(e), sd = by_sd.mod(e);
		bool lo = d < h;
		vec_t<T, V> a = *reinterpret_cast<const vec_t<T, V> *>(x + e);
		vec_t<T, V> p = *reinterpret_cast<const vec_t<T, V> *>(x + (lo ? e + h : e - h));
		vec_t<T, V> c = *reinterpret_cast<const vec_t<T, V> *>(cs + sd);
		vec_t<T, V> s = *reinterpret_cast<const vec_t<T, V> *>(sn + sd), r;
#pragma unroll
		for (int j = 0; j < V; j++) {
			float rot = lo ? -to_f(p.v[j]) : to_f(p.v[j]);
			r.v[j] = from_f<T>(to_f(a.v[j]) * to_f(c.v[j]) + rot * to_f(s.v[j]));
		}
		*reinterpret_cast<vec_t<T, V> *>(o + e) = r;
	}
}
template <typename T>
static inline int rope_fused(const T *x, const T *cs, const T *sn, T *o, long long n, long long S, long long D,
			     cudaStream_t st)
{
	constexpr int V = 16 / sizeof(T);
	fast_div by_d = make_fast_div(D, n), by_sd = make_fast_div(S * D, n);
	unsigned blocks = ka::grid_for(n, ka::PW_BLOCK);
	if ((D / 2) % V == 0 && aligned16(x) && aligned16(cs) && aligned16(sn) && aligned16(o))
		rope_fused_kernel<V, T><<<blocks, ka::PW_THREADS, 0, st>>>(x, cs, sn, o, n, by_d, by_sd);
	else
		rope_fused_kernel<1, T><<<blocks, ka::PW_THREADS, 0, st>>>(x, cs, sn, o, n, by_d, by_sd);
	return ka::launch_status();
}

// ---- the drivers ---------------------------------------------------------------------

// Attention shape: q [B, Hq, Sq, D]; k, v [B, Hkv, Skv, D] with Hq = Hkv * G;
// o like q.
struct attn_shape {
	long long B, Hq, Hkv, Sq, Skv, D;
	mask_spec mk;
};

// Bytes attention() takes from the arena besides cuBLAS's workspace: two
// fp32 score buffers (eager: the scores, the scaled scores, the clone and
// the softmax written over them in turn, the probabilities over a dead one;
// compiled: the scores and the probabilities), the eager mask tensor, and k
// and v expanded to Hq heads. A task's baseline_workspace covers all but the
// mask and the cuBLAS workspace (the runner's fixed 64 MiB covers those).
static inline size_t attention_ws_bytes(const attn_shape &s, size_t elt)
{
	size_t nS = (size_t)(s.B * s.Hq * s.Sq * s.Skv);
	size_t kv = s.Hq != s.Hkv ? 2 * (size_t)(s.B * s.Hq * s.Skv * s.D) : 0;
	size_t mask = s.mk.any() ? (size_t)(s.Sq * s.Skv) : 0;
	return 2 * nS * sizeof(float) + mask + kv * elt + 4096;
}

// The attention after any preprocessing of q and k (k and v with Hq heads):
// eager (fused false: bmm, mul, [mask tensor, clone, masked_fill_],
// softmax, cast, bmm) or compiled (bmm, softmax_fused, bmm).
template <class T>
static inline int attention_core(cublasHandle_t h, arena *ws, const attn_shape &s, const T *q, const T *k,
				 const T *v, T *o, bool fused, cudaStream_t st)
{
	long long BH = s.B * s.Hq, rows = BH * s.Sq, nS = rows * s.Skv;
	float scale = attn_scale(s.D);
	float *s1 = (float *)ws->take((size_t)nS * sizeof(float));
	float *s2 = (float *)ws->take((size_t)nS * sizeof(float));
	if (!s1 || !s2)
		return -1;
	if (bgemm<T, float>(h, true, s.Sq, s.Skv, s.D, q, s.Sq * s.D, k, s.Skv * s.D, s1, s.Sq * s.Skv, BH))
		return -1;
	T *prob = (T *)s2;
	if (fused) {
		if (softmax_fused<T>(s1, prob, rows, s.Skv, s.Sq, scale, s.mk, st))
			return -1;
	} else {
		float *cur = s2, *other = s1;
		if (ka::unary(s1, s2, nS, mul_by{scale}, st))
			return -1;
		if (s.mk.any()) {
			bool *mbuf = (bool *)ws->take((size_t)(s.Sq * s.Skv));
			if (!mbuf || eager_masked_fill(s2, s1, mbuf, BH, s.Sq, s.Skv, s.mk, st))
				return -1;
			cur = s1, other = s2;
		}
		if (eager_softmax(cur, other, rows, s.Skv, st))
			return -1;
		prob = (T *)cur;
		if (ka::unary(other, prob, nS, copy_f(), st))
			return -1;
	}
	if (bgemm<T, T>(h, false, s.Sq, s.D, s.Skv, prob, s.Sq * s.Skv, v, s.Skv * s.D, o, s.Sq * s.D, BH))
		return -1;
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

// Full attention, eager (fused false) or as torch.compile runs it (fused
// true): k and v expanded for GQA (repeat_interleave), then attention_core.
template <class T>
static inline int attention(const attn_shape &s, const T *q, const T *k, const T *v, T *o, bool fused,
			    cudaStream_t st)
{
	arena ws;
	if (!arena_open(&ws, attention_ws_bytes(s, sizeof(T)), true))
		return -1;
	cublasHandle_t h = blas_handle(st, &ws);
	if (!h)
		return -1;
	if (s.Hq != s.Hkv) {
		long long G = s.Hq / s.Hkv, n = s.B * s.Hq * s.Skv * s.D;
		T *k2 = (T *)ws.take((size_t)n * sizeof(T)), *v2 = (T *)ws.take((size_t)n * sizeof(T));
		if (!k2 || !v2 || repeat_heads(k, k2, s.B * s.Hkv, G, s.Skv * s.D, fused, st) ||
		    repeat_heads(v, v2, s.B * s.Hkv, G, s.Skv * s.D, fused, st))
			return -1;
		k = k2;
		v = v2;
	}
	return attention_core<T>(h, &ws, s, q, k, v, o, fused, st);
}

} // namespace attn

#endif
